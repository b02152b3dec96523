import BeaconFleet
import BeaconSimulator
import Foundation
import Testing

/// Issue 12's must-show in small: a fault scenario of two hours through real processes
/// (`proxima serve` on SQLite, seeded through the API, and one `proxima gateway --simulate
/// --receiver-token …` posting four receivers as four gateways), run by
/// `proxima-bench fleet-week`, whose score is read back.
@Suite("Fleet faults end to end", .serialized)
struct FleetFaultsEndToEndTests {
    static let scenarioJSON = """
    {
      "name": "fleet-short", "seed": 3, "duration": 7800, "uuid": "F7826DA6-4FA2-4E98-8024-BC5B71E0893E",
      "venue": {"width": 60, "height": 30},
      "channel": {"pathLossExponent": 2.5, "sensitivity": -92, "shadowing": {"sigma": 3}},
      "beacons": [
        {"name": "b1", "major": 1, "minor": 1001, "position": {"x": 8, "y": 6, "z": 2}, "interval": 0.5, "tlm": true, "batteryType": "CR2032"},
        {"name": "b2", "major": 1, "minor": 1002, "position": {"x": 38, "y": 6, "z": 2}, "interval": 0.5},
        {"name": "b3", "major": 1, "minor": 1003, "position": {"x": 52, "y": 6, "z": 2}, "interval": 1},
        {"name": "b4", "major": 1, "minor": 1004, "position": {"x": 8, "y": 24, "z": 2}, "interval": 1},
        {"name": "b5", "major": 1, "minor": 1005, "position": {"x": 22, "y": 24, "z": 2}, "interval": 0.5},
        {"name": "b6", "major": 1, "minor": 1006, "position": {"x": 52, "y": 24, "z": 2}, "interval": 0.5}
      ],
      "receivers": [
        {"name": "gw-a", "position": {"x": 12, "y": 8, "z": 2.5}}, {"name": "gw-b", "position": {"x": 48, "y": 8, "z": 2.5}},
        {"name": "gw-c", "position": {"x": 12, "y": 22, "z": 2.5}}, {"name": "gw-d", "position": {"x": 48, "y": 22, "z": 2.5}}
      ],
      "faults": [
        {"kind": "batteryDeath", "beacon": "b1", "start": 0, "death": 6600},
        {"kind": "batteryDeath", "beacon": "b5", "start": 0, "death": 5400},
        {"kind": "move", "beacon": "b2", "at": 3600, "to": {"x": 30, "y": 28, "z": 2}},
        {"kind": "rogue", "at": 1800, "position": {"x": 30, "y": 15, "z": 1}, "major": 1, "minor": 1999, "interval": 1},
        {"kind": "clone", "beacon": "b3", "at": 4500, "position": {"x": 58, "y": 28, "z": 1}},
        {"kind": "receiverOffline", "receiver": "gw-c", "from": 2400, "to": 3600}
      ]
    }
    """

    @Test func everyFaultRaisesItsAlertAndNoBeaconIsFalselyMissing() async throws {
        let binary = try #require(ProximaProcess.binary, "proxima was not built next to the tests")
        let bench = binary.deletingLastPathComponent().appendingPathComponent("proxima-bench")
        try #require(FileManager.default.isExecutableFile(atPath: bench.path), "proxima-bench was not built (swift build --build-tests)")
        let directory = NSTemporaryDirectory() + "proxima-fleet-faults-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scenarioPath = directory + "/short.json", scorePath = directory + "/score.json"
        try Self.scenarioJSON.write(toFile: scenarioPath, atomically: true, encoding: .utf8)

        let run = try ProximaProcess(["fleet-week", scenarioPath, "--slice", "10", "--json", scorePath], executable: bench)
        #expect(try await run.waitForExit(timeout: .seconds(600)) == 0, "\(run.outputText)")
        let score = try JSONDecoder().decode(FaultScore.self, from: Data(contentsOf: URL(fileURLWithPath: scorePath)))

        #expect(score.rows.map(\.fault) == ["batteryDeath", "batteryDeath", "move", "rogue", "clone", "receiverOffline"])
        #expect(score.rows.allSatisfy { $0.detected }, "\(run.outputText)")
        // b1 sends TLM: its battery is called out before it dies; b5 does not, so only missing can tell.
        #expect(score.rows.map(\.detectedBy) == [.battery, .missing, .drift, .unregistered, .clone, nil], "\(run.outputText)")
        #expect(score.rows[0].latency != nil && score.rows[1].latency != nil)
        #expect(score.falseMissing.isEmpty, "\(score.falseMissing)")
        #expect((score.deadLatencyRatioP95 ?? .infinity) <= 1, "\(run.outputText)")
        #expect(run.outputText.contains("| clone | b3 |"))
    }
}
