import ArgumentParser
import BeaconSimulator
import Foundation

/// `proxima security-evaluate SCENARIO…`: the spoof and replay checks on simulated attacks.
struct SecurityEvaluate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "security-evaluate",
        abstract: "Measure spoof and replay detection on attack scenarios (see docs/security.md).",
        discussion: """
            Runs each scenario with its attacks (spoofer, fastClone, clockSkew, replay), feeds \
            what the server would receive to the security detector, and prints per attack whether \
            it was detected, by which check and how fast, then over all scenarios together: the \
            detection rate by attack, false alarms per honest receiver-hour, and the p95 \
            detection latency.
            """)

    @Argument(help: "Scenario files (JSON) with an \"attacks\" array; all are measured in one run.")
    var scenarios: [String]

    @Option(help: "Simulated seconds for every scenario (default: each scenario's duration).")
    var duration: Double?

    @Flag(help: "Print the combined report as one JSON object instead of the table.")
    var json = false

    func validate() throws {
        if scenarios.isEmpty { throw ValidationError("give at least one scenario file") }
        if let duration {
            do { try Scenario.checkDuration(duration, field: "--duration") } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        var loaded: [Scenario] = []
        for path in scenarios {
            do { loaded.append(try Scenario.load(contentsOf: URL(fileURLWithPath: path))) } catch {
                throw ScenarioFileError(message: "\(path): \(error)")
            }
            if let duration { loaded[loaded.count - 1].duration = duration }
        }
        // Scenarios are independent: measure them side by side.
        let reports = await withTaskGroup(of: (Int, SecurityReport).self) { group in
            for (index, scenario) in loaded.enumerated() {
                group.addTask { (index, SecurityEvaluation(scenario: scenario).run()) }
            }
            var reports: [(Int, SecurityReport)] = []
            for await report in group { reports.append(report) }
            return reports.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let combined = SecurityReport.combined(reports)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try StandardOutput.line(String(decoding: try encoder.encode(combined), as: UTF8.self))
        } else {
            try StandardOutput.line(combined.text)
        }
    }
}
