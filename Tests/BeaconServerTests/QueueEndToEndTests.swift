import BeaconSimulator
@testable import BeaconServer
import Foundation
import Testing

/// Issue 13's queue must-show in small: the DMV venue of examples/queue.json shortened to an
/// hour of arrivals (and half an hour to drain), through real processes (`proxima serve`, one
/// `proxima gateway --simulate --receiver-token …` posting every phone as its own device), run by
/// `proxima-bench queue-day`. The measured p50 and p90 waits are within 10 % of the simulator's
/// true ones, and abandonment is counted exactly. The full day is `proxima-bench queue-day
/// examples/queue.json` (docs/apps.md).
@Suite("Queue end to end", .serialized)
struct QueueEndToEndTests {
    @Test func measuredWaitsMatchTheSimulatorsTruthAndAbandonmentIsExact() async throws {
        let binary = try #require(ProximaProcess.binary, "proxima was not built next to the tests")
        let bench = binary.deletingLastPathComponent().appendingPathComponent("proxima-bench")
        try #require(FileManager.default.isExecutableFile(atPath: bench.path), "proxima-bench was not built (swift build --build-tests)")
        let directory = NSTemporaryDirectory() + "proxima-queue-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("examples/queue.json")
        var scenario = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: example)) as? [String: Any])
        var queue = try #require(scenario["queue"] as? [String: Any])
        queue["to"] = 3600
        queue["ratePerHour"] = 30
        queue["patience"] = ["mean": 900]
        scenario["queue"] = queue
        scenario["duration"] = 5400
        scenario["name"] = "DMV hour"
        let scenarioPath = directory + "/queue-hour.json", resultPath = directory + "/result.json"
        try JSONSerialization.data(withJSONObject: scenario).write(to: URL(fileURLWithPath: scenarioPath))
        let truth = try #require(try Scenario.load(contentsOf: URL(fileURLWithPath: scenarioPath)).queue)
        #expect(truth.customers.contains { !$0.served }, "the hour needs someone who gives up")

        let run = try ProximaProcess(["queue-day", scenarioPath, "--json", resultPath], executable: bench)
        #expect(try await run.waitForExit(timeout: .seconds(600)) == 0, "\(run.outputText)")
        let result = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: resultPath))) as? [String: Any]
        let measured = try #require(result)
        let waits = truth.customers.compactMap(\.wait).sorted()
        #expect(measured["trueServed"] as? Int == waits.count)
        #expect(measured["measuredServed"] as? Int == waits.count, "\(run.outputText)")
        #expect(measured["measuredAbandoned"] as? Int == truth.customers.count - waits.count, "\(run.outputText)")
        for (q, key) in [(0.5, "measuredP50"), (0.9, "measuredP90")] {
            let exact = try #require(WaitHistogram.exactQuantile(q, of: waits))
            let value = try #require(measured[key] as? Double, "\(run.outputText)")
            #expect(abs(value - exact) / exact <= 0.10, "\(key) \(value) against the truth's \(exact)\n\(run.outputText)")
        }
    }
}
