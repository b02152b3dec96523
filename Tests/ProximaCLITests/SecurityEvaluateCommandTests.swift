import Foundation
import Testing

/// `proxima security-evaluate`, run as the built executable on a small hall under attack.
@Suite struct SecurityEvaluateCommandTests {
    static func hall(attacks: String) -> String {
        """
        {"name": "hall", "seed": 3, "duration": 300, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
         "venue": {"width": 40, "height": 20}, "channel": {"sensitivity": -95},
         "beacons": [{"name": "door", "major": 1, "minor": 1, "position": {"x": 2, "y": 10}},
                     {"name": "shelf", "major": 1, "minor": 2, "position": {"x": 38, "y": 10}}],
         "receivers": [{"name": "west", "position": {"x": 1, "y": 10}}, {"name": "east", "position": {"x": 39, "y": 10}}],
         "attacks": \(attacks)}
        """
    }

    @Test func measuresEveryScenarioGivenInOneRun() async throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spoofed = directory.appendingPathComponent("spoofed.json")
        try Data(Self.hall(attacks: #"[{"kind": "spoofer", "name": "door copied east", "beacons": ["door"], "position": {"x": 37, "y": 12}, "at": 100}]"#).utf8)
            .write(to: spoofed)
        let skewed = directory.appendingPathComponent("skewed.json")
        try Data(Self.hall(attacks: #"[{"kind": "clockSkew", "name": "west ahead", "receiver": "west", "at": 50, "offset": 20}, {"kind": "clockSkew", "name": "after the end", "receiver": "east", "at": 400, "offset": 5}]"#).utf8)
            .write(to: skewed)
        let outcome = try await ProximaBinary.run(["security-evaluate", spoofed.path, skewed.path, "--json"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any])
        let attacks = try #require(report["attacks"] as? [[String: Any]])
        // The clock attack set after the run's end never happened, so it is not scored.
        #expect(attacks.compactMap { $0["attack"] as? String } == ["door copied east", "west ahead"])
        #expect(attacks.allSatisfy { $0["detected"] as? Bool == true })
        #expect(attacks.last?["detectedBy"] as? String == "clockSkew")
        #expect((report["falseAlarms"] as? [Any])?.isEmpty == true)

        let text = try await ProximaBinary.run(["security-evaluate", spoofed.path, skewed.path])
        #expect(text.standardOutput.contains("Detected: 2 of 2 attacks (100.0 %)"))
        #expect(text.standardOutput.contains("Detection latency p95:"))
    }

    @Test func aMalformedAttackIsRefusedWithItsPath() async throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.json")
        try Data(Self.hall(attacks: #"[{"kind": "clockSkew", "receiver": "north", "offset": 5}]"#).utf8).write(to: file)
        let outcome = try await ProximaBinary.run(["security-evaluate", file.path])
        #expect(outcome.status != 0)
        #expect(outcome.standardError.contains(#"attacks[0].receiver: expected the name of a receiver, found "north""#))
    }
}
