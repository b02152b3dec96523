import BeaconFleet
import BeaconKit
import BeaconMQTT
@testable import BeaconServer
import Foundation
import Testing

/// What `proxima serve --mqtt` publishes for each kind of stored event (docs/mqtt.md).
struct ServerMQTTMessagesTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func options(maximumSubjects: Int = 10_000) -> ServerMQTTMessages.Options {
        var options = ServerMQTTMessages.Options()
        options.prefix = "venue"
        options.instance = "Front Desk:42"
        options.maximumSubjects = maximumSubjects
        return options
    }

    static func room(_ kind: RoomOccurrence.Kind, _ room: String, subject: String = "Ann's phone", id: Int = 1) -> StoredEvent {
        StoredEvent(id: id, gatewayID: "g1", siteID: 1, label: subject,
                    occurrence: .room(RoomOccurrence(kind: kind, time: 100, room: room, subject: RoomOccurrence.Subject(.phone(subject)))))
    }

    @Test func aRegionEnterIsAnEventAndARetainedStateUnderItsGateway() throws {
        var messages = ServerMQTTMessages(options: Self.options())
        let region = try BeaconRegion(identifier: "Shoes", uuid: Self.uuid, major: 1)
        let published = messages.messages(for: StoredEvent(id: 7, gatewayID: "5F97-ab", siteID: 1, label: "Shoes", event: .didEnter(region, time: 10)))
        #expect(published.map(\.topic) == ["venue/server/events", "venue/5f97-ab/regions/shoes/state"])
        let event = try #require(try JSONSerialization.jsonObject(with: Data(published[0].payload)) as? [String: Any])
        #expect(event["event"] as? String == "enter" && event["id"] as? Int == 7 && event["gatewayID"] as? String == "5F97-ab")
        #expect(published[0].qos == .atLeastOnce && !published[0].retain)
        #expect(published[1].text == "inside" && published[1].retain)

        let exit = messages.messages(for: StoredEvent(id: 8, gatewayID: "5F97-ab", siteID: 1, label: "Shoes", event: .didExit(region, time: 40)))
        #expect(exit.last?.text == "outside" && exit.last?.topic == "venue/5f97-ab/regions/shoes/state")
        #expect(messages.statusTopic == "venue/server/front-desk-42/status")
        #expect(messages.will.text == "offline" && messages.will.retain && messages.online.text == "online")
    }

    @Test func aSubjectsRoomIsItsStateAndHomeAssistantLearnsItOnce() throws {
        var messages = ServerMQTTMessages(options: Self.options())
        let first = messages.messages(for: Self.room(.roomEnter, "Kitchen"))
        let config = try #require(first.first { $0.topic == "homeassistant/device_tracker/proxima_room_ann-s-phone/config" })
        #expect(config.retain)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(config.payload)) as? [String: Any])
        // Home Assistant's required and used keys for an MQTT device tracker.
        for key in ["name", "unique_id", "state_topic", "availability_topic", "payload_home", "payload_not_home", "source_type", "device"] {
            #expect(body[key] != nil, "the tracker config lacks \(key)")
        }
        #expect(body["state_topic"] as? String == "venue/rooms/ann-s-phone/state")
        #expect(body["availability_topic"] as? String == messages.statusTopic)
        #expect(first.last?.topic == "venue/rooms/ann-s-phone/state" && first.last?.text == "Kitchen" && first.last?.retain == true)

        // Into the hall before the kitchen's exit arrives: the late exit does not say not_home.
        let hall = messages.messages(for: Self.room(.roomEnter, "Hall"))
        #expect(!hall.contains { $0.topic.hasPrefix("homeassistant/") }, "discovery is published once per subject")
        #expect(hall.last?.text == "Hall")
        let lateExit = messages.messages(for: Self.room(.roomExit, "Kitchen"))
        #expect(lateExit.map(\.topic) == ["venue/server/events"])
        let leaves = messages.messages(for: Self.room(.roomExit, "Hall"))
        #expect(leaves.last?.topic == "venue/rooms/ann-s-phone/state" && leaves.last?.text == "not_home")
        #expect(messages.rememberedSubjects == 0)
    }

    @Test func aRoomChangeGoesStraightToTheNewRoomAndOnlyADepartureIsNotHome() throws {
        var messages = ServerMQTTMessages(options: Self.options())
        let state = "venue/rooms/ann-s-phone/state"
        func states(_ published: [MQTTMessage]) -> [String] { published.filter { $0.topic == state }.map(\.text) }
        #expect(states(messages.messages(for: [Self.room(.roomEnter, "Kitchen", id: 1)])) == ["Kitchen"])
        // The room decider stores a change as the old room's exit and the new room's enter, in one batch.
        let change = messages.messages(for: [Self.room(.roomExit, "Kitchen", id: 2), Self.room(.roomEnter, "Hall", id: 3)])
        #expect(states(change) == ["Hall"], "a room change passed through \(states(change))")
        #expect(change.filter { $0.topic == "venue/server/events" }.count == 2, "both events are still published")
        // Another subject's enter in the same batch does not hide a real departure.
        let departure = messages.messages(for: [Self.room(.roomExit, "Hall", id: 4), Self.room(.roomEnter, "Hall", subject: "Bob", id: 5)])
        #expect(states(departure) == ["not_home"])
    }

    @Test func republishedCarriesEveryAnnouncedTrackerAndItsCurrentRoom() throws {
        var messages = ServerMQTTMessages(options: Self.options())
        #expect(messages.republished().isEmpty)
        let beacon = StoredEvent(id: 1, gatewayID: "g1", siteID: 1, label: "keys",
                                 occurrence: .room(RoomOccurrence(kind: .roomEnter, time: 100, room: "Hall",
                                                                  subject: RoomOccurrence.Subject(.beacon(BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2))))))
        let announced = messages.messages(for: [Self.room(.roomEnter, "Kitchen"), beacon, Self.room(.roomEnter, "Hall", subject: "Bob")])
        _ = messages.messages(for: [Self.room(.roomExit, "Hall", subject: "Bob")])
        let again = messages.republished()
        for config in announced where config.topic.hasPrefix("homeassistant/") {
            #expect(again.contains(config), "\(config.topic) is not republished")
        }
        #expect(again.contains(MQTTMessage(topic: "venue/rooms/ann-s-phone/state", text: "Kitchen", qos: .atLeastOnce, retain: true)))
        #expect(again.contains(MQTTMessage(topic: "venue/rooms/bob/state", text: "not_home", qos: .atLeastOnce, retain: true)))
        #expect(messages.homeAssistantStatusTopic == "homeassistant/status")
        // The server's device for a beacon is not named like the gateways' device for it.
        let tracker = try #require(announced.first { $0.topic.hasPrefix("homeassistant/") && $0.text.contains("iBeacon") })
        let device = try #require((try JSONSerialization.jsonObject(with: Data(tracker.payload)) as? [String: Any])?["device"] as? [String: Any])
        let gatewayDevice = try #require((try JSONSerialization.jsonObject(with: Data(
            HomeAssistantDiscovery(topics: BeaconTopics(prefix: "venue", gateway: "g1")).messages(for: BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2))[0].payload))
            as? [String: Any])?["device"] as? [String: Any])
        #expect(device["name"] as? String != gatewayDevice["name"] as? String, "\(device) \(gatewayDevice)")
    }

    @Test func aFleetAlertIsItsSubjectsRetainedLevel() throws {
        var messages = ServerMQTTMessages(options: Self.options())
        let identity = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 4)
        let occurrence = FleetOccurrence(kind: .alertRaised, time: 500, alertID: 3, check: .missing, level: .alert, previousLevel: .ok,
                                         reason: "not heard for 20 min", subject: FleetOccurrence.Subject(.beacon(identity)))
        let published = messages.messages(for: StoredEvent(id: 9, gatewayID: "", siteID: 1, label: "Till", occurrence: .fleet(occurrence)))
        let state = try #require(published.last)
        #expect(state.topic == "venue/fleet/beacon/e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-4/state" && state.retain)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(state.payload)) as? [String: Any])
        #expect(body["level"] as? String == "alert" && body["check"] as? String == "missing" && body["reason"] as? String == "not heard for 20 min")
    }

    @Test func aFloodOfSubjectsKeepsTheRememberedRoomsBounded() {
        var messages = ServerMQTTMessages(options: Self.options(maximumSubjects: 100))
        var configs = 0
        for index in 0..<1_000 {
            let published = messages.messages(for: Self.room(.roomEnter, "Hall", subject: "phone \(index)", id: index))
            configs += published.filter { $0.topic.hasPrefix("homeassistant/") }.count
            // Every subject still gets its room, remembered or not.
            #expect(published.last?.text == "Hall")
        }
        #expect(messages.rememberedSubjects == 100)
        #expect(configs == 100)
    }
}
