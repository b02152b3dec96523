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
        ])
        #expect(first[0...3].allSatisfy { $0.retain && $0.qos == .atLeastOnce })
        #expect(first[3].text == "kitchen")
        let tracker = try json(first[0])
        #expect(tracker["state_topic"] as? String == "p/g/beacons/\(beaconLevel)/state")
        #expect(tracker["availability_topic"] as? String == "p/g/status")
        #expect(tracker["unique_id"] as? String == "proxima_g_\(beaconLevel)")
        let reading = try json(first[4])
        #expect(reading["distance"] as? Double == 2.5 && reading["rssi"] as? Int == -70 && reading["proximity"] as? String == "near")
        #expect(!first[4].retain && first[4].qos == .atMostOnce)

        // The same cycle through a second region adds nothing.
        #expect(publisher.messages(for: .didRange([ranged(identity, time: 1)], other, time: 1)).isEmpty)
        // Next cycle: only the reading; unknown distance is null.
        let next = publisher.messages(for: .didRange([ranged(identity, accuracy: -1, rssi: 0, packets: 0, time: 1)], region, time: 2))
        #expect(next.map(\.topic) == ["p/g/beacons/\(beaconLevel)/ranging"])
        #expect(try json(next[0])["distance"] is NSNull)
        // Gone from the list: not_home, retained; a later return announces it again without discovery.
        let gone = publisher.messages(for: .didRange([], region, time: 9))
        #expect(gone == [MQTTMessage(topic: "p/g/beacons/\(beaconLevel)/state", text: "not_home", qos: .atLeastOnce, retain: true)])
        let back = publisher.messages(for: .didRange([ranged(identity, time: 20)], region, time: 20))
        #expect(back.map(\.topic) == ["p/g/beacons/\(beaconLevel)/state", "p/g/beacons/\(beaconLevel)/ranging"])
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
        publisher.note(Sighting(time: 0.5, receiver: "r", address: address, rssi: -70,
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

    @Test("topic levels carry no separator or wildcard", arguments: ["a/b", "+", "#", "Living Room", "", "ÄÖ"])
    func topicLevels(_ name: String) {
        let level = BeaconTopics.topicLevel(name)
        #expect(!level.isEmpty && !level.contains("/") && !level.contains("+") && !level.contains("#") && !level.contains(" "))
    }
}
