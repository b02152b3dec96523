import BeaconKit
import BeaconMQTT
import BeaconTesting
import Foundation
import Testing

@Suite("ESPresense device reports read as sightings")
struct ESPresenseReportTests {
    static let id = "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-10"

    func parse(_ json: String, topic: String = "espresense/devices/\(ESPresenseReportTests.id)/living-room") throws(ESPresenseReport.Refusal) -> ESPresenseReport {
        try ESPresenseReport(topic: topic, payload: Array(json.utf8))
    }

    @Test("a node's report: id, room from the topic, rssi, rssi@1m and distance; other fields ignored")
    func report() throws {
        let report = try parse(#"{"id":"\#(Self.id)","idType":180,"rssi@1m":-59,"rssi":-71,"raw":3.98,"distance":2.51,"speed":0.1,"mac":"c0ffee001122","interval":105}"#)
        #expect(report == ESPresenseReport(id: Self.id, room: "living-room", rssi: -71, rssiAtOneMetre: -59, distance: 2.51,
                                           address: BluetoothAddress("C0:FF:EE:00:11:22")))
        let minimal = try parse(#"{"id":"\#(Self.id)","rssi":-80}"#)
        #expect(minimal.rssiAtOneMetre == nil && minimal.distance == nil && minimal.rssi == -80)
    }

    @Test("a refusal names the field", arguments: [
        (#"{"rssi":-70}"#, "id"),
        (#"{"id":"someone-else","rssi":-70}"#, "id"),
        (#"{"id":"\#(ESPresenseReportTests.id)"}"#, "rssi"),
        (#"{"id":"\#(ESPresenseReportTests.id)","rssi":"-70"}"#, "rssi"),
        (#"{"id":"\#(ESPresenseReportTests.id)","rssi":0}"#, "rssi"),
        (#"{"id":"\#(ESPresenseReportTests.id)","rssi":1e300}"#, "rssi"),
        (#"{"id":"\#(ESPresenseReportTests.id)","rssi":-70,"rssi@1m":true}"#, "rssi@1m"),
        (#"{"id":"\#(ESPresenseReportTests.id)","rssi":-70,"distance":-1}"#, "distance"),
        (#"[1,2]"#, "payload"),
        ("not json", "payload"),
    ])
    func refusals(json: String, field: String) {
        #expect {
            _ = try parse(json)
        } throws: { error in
            (error as? ESPresenseReport.Refusal)?.field == field
        }
    }

    @Test("the topic must be espresense/devices/<id>/<room>", arguments: ["espresense/devices/x", "espresense/rooms/x/y", "other/devices/x/y",
                                                                          "espresense/devices//kitchen", "espresense/devices/x/"])
    func topics(topic: String) {
        #expect {
            _ = try ESPresenseReport(topic: topic, payload: Array(#"{"id":"x","rssi":-70}"#.utf8))
        } throws: { error in
            (error as? ESPresenseReport.Refusal)?.field == "topic"
        }
    }

    @Test("an iBeacon report is a sighting by the node's room; other devices are none")
    func sighting() throws {
        let report = try parse(#"{"id":"\#(Self.id)","rssi@1m":-61,"rssi":-72.5,"mac":"c0ffee001122"}"#)
        let sighting = try #require(report.sighting(at: 1000))
        let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 10)
        #expect(sighting.frame == .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-61))))
        #expect(sighting.receiver == "living-room" && sighting.rssi == -73 && sighting.time == 1000)
        #expect(sighting.address == BluetoothAddress("C0:FF:EE:00:11:22"))
        #expect(try parse(#"{"id":"\#(Self.id)-3","rssi":-70}"#, topic: "espresense/devices/\(Self.id)-3/hall").beaconIdentity == identity)
        #expect(try parse(#"{"id":"apple:1005:9-26","rssi":-70}"#, topic: "espresense/devices/apple:1005:9-26/hall").sighting(at: 1) == nil)
        #expect(throws: ESPresenseReport.Refusal.self) { _ = try parse(#"{"id":"\#(Self.id)","rssi":-70,"mac":"zz"}"#) }
    }

    @Test("ESPresense nodes on a real broker become a sighting source", .enabled(if: MosquittoBroker.shouldRun))
    func sourceFromBroker() async throws {
        let broker = try MosquittoBroker()
        let url = MQTTBrokerURL(host: "127.0.0.1", port: broker.port)
        let refusals = MessageTexts()
        let source = await SightingSource.espresense(client: MQTTClient(configuration: MQTTClient.Configuration(broker: url, clientIdentifier: "espresense-reader")),
                                                     now: { 42 }, refused: { refusals.append($0.field) })
        let node = MQTTClient(configuration: MQTTClient.Configuration(broker: url, clientIdentifier: "espresense-node"))
        await node.start()
        #expect(await node.waitUntilConnected(timeout: .seconds(60)))
        // Published until the reader's subscription is in place (a report before it is lost, as with a real node).
        let first = Task { () -> Sighting? in
            for try await sighting in source.sightings { return sighting }
            return nil
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while refusals.all.isEmpty, ContinuousClock.now < deadline {
            try await node.publish(MQTTMessage(topic: "espresense/devices/\(Self.id)/kitchen", text: #"{"id":"\#(Self.id)","rssi":"loud"}"#))
            // Waits on mosquitto (a real broker process) relaying the node's report.
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(refusals.all.first == "rssi")
        try await node.publish(MQTTMessage(topic: "espresense/devices/\(Self.id)/kitchen", text: #"{"id":"\#(Self.id)","rssi":-66,"rssi@1m":-59}"#))
        let sighting = try #require(try await first.value)
        #expect(sighting.receiver == "kitchen" && sighting.rssi == -66 && sighting.time == 42)
        try await source.stop()
        await node.disconnect()
    }
}
