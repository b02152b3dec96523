import BeaconMQTT
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
        #expect(report == ESPresenseReport(id: Self.id, room: "living-room", rssi: -71, rssiAtOneMetre: -59, distance: 2.51))
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
}
