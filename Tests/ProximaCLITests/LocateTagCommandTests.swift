import BeaconKit
import Foundation
import Testing

/// `proxima locate --sightings` with gateways on the map: a beacon that is not on the map is a
/// carried tag, located from the gateways that hear it, its room from the default room decider.
@Suite struct LocateTagCommandTests {
    @Test func aTagHeardByFourGatewaysIsLocatedAndMovesRoom() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("locate-tag-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let corners = [(1.0, 1.0), (1.0, 9.0), (19.0, 1.0), (19.0, 9.0)]
        let receivers = corners.enumerated().map { "{\"name\": \"gw\($0.offset)\", \"position\": {\"x\": \($0.element.0), \"y\": \($0.element.1)}}" }
        let map = directory.appendingPathComponent("map.json")
        try Data("""
        {"venue": {"width": 20, "height": 10, "walls": [{"from": {"x": 10, "y": 0}, "to": {"x": 10, "y": 4}}, {"from": {"x": 10, "y": 6}, "to": {"x": 10, "y": 10}}]},
         "rooms": [{"name": "west", "polygon": [{"x": 0, "y": 0}, {"x": 10, "y": 0}, {"x": 10, "y": 10}, {"x": 0, "y": 10}]},
                   {"name": "east", "polygon": [{"x": 10, "y": 0}, {"x": 20, "y": 0}, {"x": 20, "y": 10}, {"x": 10, "y": 10}]}],
         "doors": [{"name": "door", "position": {"x": 10, "y": 5}}],
         "receivers": [\(receivers.joined(separator: ", "))]}
        """.utf8).write(to: map)
        // The tag advertises −59 dBm at 1 m; free space (n = 2, 1 m height offset) and 5 dB
        // through the middle wall (the map's default attenuation).
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        let frame = BeaconFrame.iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: 7, minor: 7)))
        let encoder = JSONEncoder()
        var lines: [String] = []
        for tenth in 0..<200 {
            let time = Double(tenth) / 10
            let spot = time < 10 ? (4.0, 5.0) : (16.0, 5.0)
            for (index, corner) in corners.enumerated() {
                let squared = (spot.0 - corner.0) * (spot.0 - corner.0) + (spot.1 - corner.1) * (spot.1 - corner.1) + 1
                let wall = (spot.0 < 10) != (corner.0 < 10) ? 5.0 : 0
                let rssi = -59 - 10 * log10(squared) - wall
                let sighting = Sighting(time: time, receiver: "gw\(index)", address: BluetoothAddress(rawValue: 0xA0 + UInt64(index)),
                                        rssi: Int8(rssi.rounded()), frame: frame)
                lines.append(String(decoding: try encoder.encode(sighting), as: UTF8.self))
            }
        }
        let sightings = directory.appendingPathComponent("sightings.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: sightings)
        let outcome = try await ProximaBinary.run(["locate", "--map", map.path, "--sightings", sightings.path, "--method", "trilateration"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let output = outcome.standardOutput.split(separator: "\n").map(String.init)
        let subject = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 7.7"
        let fixes = output.filter { $0.contains(subject) && $0.hasSuffix("trilateration") }
        #expect(fixes.count >= 18, "\(output)")
        #expect(fixes.first?.contains("  west  ") == true && fixes.last?.contains("  east  ") == true, "\(fixes)")
        let events = output.filter { $0.contains(" enter ") || $0.contains(" exit ") }
        #expect(events.count == 3 && events.allSatisfy { $0.hasSuffix(subject) }, "\(events)")
        #expect(events.last?.contains("enter  east") == true, "\(events)")
    }
}
