import BeaconKit
import BeaconMQTT
import Foundation
import Testing

@Suite("MQTT topics from engine events")
struct PublisherTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    let region = try! BeaconRegion(identifier: "San Francisco store", uuid: PublisherTests.uuid, major: 1)
    let other = try! BeaconRegion(identifier: "Clothing", uuid: PublisherTests.uuid, major: 1, minor: 10)
    let identity = BeaconIdentity(uuid: PublisherTests.uuid, major: 1, minor: 10)

    func ranged(_ identity: BeaconIdentity, accuracy: Double = 2.5, rssi: Int = -70, packets: Int = 10, time: Double) -> RangedBeacon {
        RangedBeacon(identity: identity, proximity: .near, accuracy: accuracy, rssi: rssi, measuredPower: MeasuredPower(-59),
                     timestamp: time, packetCount: packets)
    }

    func json(_ message: MQTTMessage) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    @Test("enter and exit: a QoS 1 event and the retained region state")
    func enterExit() throws {
        var publisher = BeaconMQTTPublisher(topics: BeaconTopics(prefix: "proxima", gateway: "Hall / North"))
        let entered = publisher.messages(for: .didEnter(region, time: 12))
        #expect(entered.map(\.topic) == ["proxima/hall-north/events", "proxima/hall-north/regions/san-francisco-store/state"])
        #expect(entered[0].qos == .atLeastOnce && !entered[0].retain)
        #expect(try json(entered[0])["event"] as? String == "enter")
        #expect(entered[1].text == "inside" && entered[1].retain)
        let exited = publisher.messages(for: .didExit(region, time: 40))
        #expect(exited[1].text == "outside" && exited[1].retain)
        #expect(publisher.will == MQTTMessage(topic: "proxima/hall-north/status", text: "offline", qos: .atLeastOnce, retain: true))
        #expect(publisher.messages(for: .didDetermineState(.unknown, region, time: 1)).isEmpty)
    }

    @Test("first ranging: discovery, present state and reading; once per cycle across regions; not_home when it leaves the list")
    func rangingLifecycle() throws {
        var options = BeaconMQTTPublisher.Options()
        options.room = "kitchen"
        var publisher = BeaconMQTTPublisher(topics: BeaconTopics(prefix: "p", gateway: "g"), options: options)
        let beaconLevel = "e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-10"
        let first = publisher.messages(for: .didRange([ranged(identity, time: 1)], region, time: 1))
        #expect(first.map(\.topic) == [
            "homeassistant/device_tracker/proxima_g_\(beaconLevel)/config",
            "homeassistant/sensor/proxima_g_\(beaconLevel)_distance/config",
            "homeassistant/sensor/proxima_g_\(beaconLevel)_rssi/config",
            "p/g/beacons/\(beaconLevel)/state",
            "p/g/beacons/\(beaconLevel)/ranging",
            "p/g/beacons/\(beaconLevel)/attributes",
        ])
        #expect(first[0...3].allSatisfy { $0.retain && $0.qos == .atLeastOnce })
        #expect(first[3].text == "kitchen")
        let tracker = try json(first[0])
        #expect(tracker["state_topic"] as? String == "p/g/beacons/\(beaconLevel)/state")
        #expect(tracker["availability_topic"] as? String == "p/g/status")
        #expect(tracker["unique_id"] as? String == "proxima_g_\(beaconLevel)")
        // The tracker's attributes are not the per-second reading: the recorder stores a row
        // for every attribute change.
        #expect(tracker["json_attributes_topic"] as? String == "p/g/beacons/\(beaconLevel)/attributes")
        let attributes = try json(first[5])
        #expect(attributes["proximity"] as? String == "near" && attributes["minor"] as? Int == 10 && attributes["time"] == nil)
        #expect(first[5].retain)
        let reading = try json(first[4])
        #expect(reading["distance"] as? Double == 2.5 && reading["rssi"] as? Int == -70 && reading["proximity"] as? String == "near")
        #expect(!first[4].retain && first[4].qos == .atMostOnce)

        // The same cycle through a second region adds nothing.
        #expect(publisher.messages(for: .didRange([ranged(identity, time: 1)], other, time: 1)).isEmpty)
        // Next cycle, not heard (iOS lists it with RSSI 0 and unknown accuracy): no reading at
        // all rather than RSSI 0, the strongest possible signal; the attributes are unchanged.
        let unheard = publisher.messages(for: .didRange([ranged(identity, accuracy: -1, rssi: 0, packets: 0, time: 1)], region, time: 2))
        #expect(unheard.isEmpty, "\(unheard.map(\.text))")
        // Heard, with unknown distance: only the reading, whose distance is null.
        let next = publisher.messages(for: .didRange([ranged(identity, accuracy: -1, rssi: -95, packets: 1, time: 3)], region, time: 3))
        #expect(next.map(\.topic) == ["p/g/beacons/\(beaconLevel)/ranging"])
        #expect(try json(next[0])["distance"] is NSNull)
        #expect(try json(next[0])["rssi"] as? Int == -95)
        // Gone from the list: not_home, retained; a later return announces it again without discovery.
        let gone = publisher.messages(for: .didRange([], region, time: 9))
        #expect(gone == [MQTTMessage(topic: "p/g/beacons/\(beaconLevel)/state", text: "not_home", qos: .atLeastOnce, retain: true)])
        let back = publisher.messages(for: .didRange([ranged(identity, time: 20)], region, time: 20))
        #expect(back.map(\.topic) == ["p/g/beacons/\(beaconLevel)/state", "p/g/beacons/\(beaconLevel)/ranging",
                                      "p/g/beacons/\(beaconLevel)/attributes"])
    }

    @Test("the tracker's attributes are published only when the proximity zone changes")
    func attributesOnChange() throws {
        var publisher = BeaconMQTTPublisher(topics: BeaconTopics(prefix: "p", gateway: "g"))
        func cycle(_ proximity: Proximity, rssi: Int, time: Double) -> [MQTTMessage] {
            let beacon = RangedBeacon(identity: identity, proximity: proximity, accuracy: 2, rssi: rssi, measuredPower: MeasuredPower(-59),
                                      timestamp: time, packetCount: rssi == 0 ? 0 : 5)
            return publisher.messages(for: .didRange([beacon], region, time: time)).filter { $0.topic.hasSuffix("/attributes") }
        }
        #expect(cycle(.near, rssi: -70, time: 1).count == 1)
        // Every second's reading changes RSSI and distance; the attributes do not.
        for second in 2...30 { #expect(cycle(.near, rssi: -70 - second % 5, time: Double(second)).isEmpty) }
        // A cycle it was not heard keeps the last zone instead of flapping to unknown and back.
        #expect(cycle(.unknown, rssi: 0, time: 31).isEmpty)
        let far = cycle(.far, rssi: -90, time: 32)
        #expect(far.count == 1)
        #expect(try json(far[0])["proximity"] as? String == "far")
    }

    @Test("republished: discovery, state and attributes of every announced beacon, departed ones as not_home")
    func republished() throws {
        var publisher = BeaconMQTTPublisher(topics: BeaconTopics(prefix: "p", gateway: "g"))
        let gone = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 11)
        #expect(publisher.republished().isEmpty)
        _ = publisher.messages(for: .didRange([ranged(identity, time: 1), ranged(gone, time: 1)], region, time: 1))
        _ = publisher.messages(for: .didRange([ranged(identity, time: 2)], region, time: 2))
        let again = publisher.republished()
        let discovery = publisher.discovery
        for beacon in [identity, gone] {
            for config in discovery.messages(for: beacon) { #expect(again.contains(config), "\(config.topic) not republished") }
        }
        #expect(again.contains(MQTTMessage(topic: publisher.topics.beaconState(identity), text: "home", qos: .atLeastOnce, retain: true)))
        #expect(again.contains(MQTTMessage(topic: publisher.topics.beaconState(gone), text: "not_home", qos: .atLeastOnce, retain: true)))
        #expect(again.contains { $0.topic == publisher.topics.beaconAttributes(identity) && $0.retain })
        #expect(again.allSatisfy { $0.retain && $0.qos == .atLeastOnce })
        #expect(discovery.isBirth(MQTTMessage(topic: "homeassistant/status", text: "online")))
        #expect(!discovery.isBirth(MQTTMessage(topic: "homeassistant/status", text: "offline")))
    }

    @Test("the number of tracked beacons is bounded")
    func bounded() {
        var options = BeaconMQTTPublisher.Options()
        options.maximumBeacons = 5
        var publisher = BeaconMQTTPublisher(topics: BeaconTopics(prefix: "p", gateway: "g"), options: options)
        let beacons = (0..<50).map { ranged(BeaconIdentity(uuid: Self.uuid, major: 1, minor: UInt16($0)), time: 1) }
        let messages = publisher.messages(for: .didRange(beacons, region, time: 1))
        #expect(publisher.trackedBeacons == 5)
        #expect(messages.filter { $0.topic.hasSuffix("/ranging") }.count == 5)
    }

    @Test("ESPresense report: topic and the fields an ESPresense node sends")
    func espresense() throws {
        var options = BeaconMQTTPublisher.Options()
        options.espresense = true
        options.homeAssistantDiscovery = false
        var publisher = BeaconMQTTPublisher(topics: BeaconTopics(prefix: "p", gateway: "Living Room"), options: options)
        let address = try #require(BluetoothAddress("C0:FF:EE:00:11:22"))
        _ = publisher.note(Sighting(time: 0.5, receiver: "r", address: address, rssi: -70,
                                    frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59)))))
        _ = publisher.messages(for: .didRange([ranged(identity, accuracy: 2.0, time: 1)], region, time: 1))
        let messages = publisher.messages(for: .didRange([ranged(identity, accuracy: 3.0, rssi: -79, packets: 10, time: 2)], region, time: 2))
        let report = try #require(messages.first { $0.topic.hasPrefix("espresense/") })
        #expect(report.topic == "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-10/living-room")
        let body = try json(report)
        #expect(body["id"] as? String == "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-10")
        #expect(body["rssi@1m"] as? Int == -59 && body["rssi"] as? Int == -79)
        #expect(body["raw"] as? Double == 10)  // 10^((−59 + 79) / 20)
        #expect(body["distance"] as? Double == 3 && body["speed"] as? Double == 1)
        #expect(body["mac"] as? String == "c0ffee001122")
        #expect(body["interval"] as? Int == 50)  // 1 s over 20 packets
    }

    @Test("battery: a tracked beacon's Eddystone-TLM from its address becomes a voltage sensor, published on change")
    func battery() throws {
        var publisher = BeaconMQTTPublisher(topics: BeaconTopics(prefix: "p", gateway: "hall"))
        let address = try #require(BluetoothAddress("C0:FF:EE:00:11:22"))
        let stranger = try #require(BluetoothAddress("C0:FF:EE:00:11:99"))
        func tlm(_ millivolts: UInt16, at time: Double, from sender: BluetoothAddress) -> Sighting {
            Sighting(time: time, receiver: "r", address: sender, rssi: -70,
                     frame: .eddystone(.tlm(EddystoneTelemetry(batteryMillivolts: millivolts, temperatureCelsius: 21.5, advertisingCount: 1, uptimeDeciseconds: 10))))
        }
        #expect(publisher.wantsSightings)
        _ = publisher.note(Sighting(time: 0.5, receiver: "r", address: address, rssi: -70,
                                    frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59)))))
        // Not yet ranged: no sensor for a beacon Home Assistant does not know.
        #expect(publisher.note(tlm(2900, at: 0.6, from: address)).isEmpty)
        _ = publisher.messages(for: .didRange([ranged(identity, time: 1)], region, time: 1))
        let first = publisher.note(tlm(2900, at: 1.5, from: address))
        let config = try #require(first.first { $0.topic == "homeassistant/sensor/proxima_hall_e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-10_battery/config" })
        let body = try json(config)
        for key in ["name", "unique_id", "state_topic", "availability_topic", "device", "value_template", "unit_of_measurement"] {
            #expect(body[key] != nil, "battery sensor config lacks \(key)")
        }
        #expect(body["device_class"] as? String == "voltage" && body["unit_of_measurement"] as? String == "V")
        let state = try #require(first.last)
        #expect(state.topic == "p/hall/beacons/e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-10/battery" && state.retain)
        let reading = try json(state)
        #expect(reading["voltage"] as? Double == 2.9 && reading["temperature"] as? Double == 21.5)
        // The same voltage soon after is not repeated; a change is, without a second config.
        #expect(publisher.note(tlm(2900, at: 30, from: address)).isEmpty)
        let changed = publisher.note(tlm(2850, at: 31, from: address))
        #expect(changed.count == 1)
        #expect(try json(changed[0])["millivolts"] as? Int == 2850)
        // Another address's telemetry, and a TLM without a battery reading, say nothing.
        #expect(publisher.note(tlm(2000, at: 32, from: stranger)).isEmpty)
        #expect(publisher.note(tlm(0, at: 33, from: address)).isEmpty)
    }

    @Test("topic levels carry no separator or wildcard", arguments: ["a/b", "+", "#", "Living Room", "", "ÄÖ"])
    func topicLevels(_ name: String) {
        let level = BeaconTopics.topicLevel(name)
        #expect(!level.isEmpty && !level.contains("/") && !level.contains("+") && !level.contains("#") && !level.contains(" "))
    }
}
