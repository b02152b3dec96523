import ArgumentParser
import BeaconSimulator
import Foundation

/// `proxima evaluate SCENARIO`: the engine on a simulated stream, measured against truth.
struct Evaluate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure monitoring and ranging against the simulator's ground truth.",
        discussion: """
            Runs the engine's default configuration and its alternatives (filters, distance \
            models, exit rules) on the scenario's sightings, one engine per receiver, and prints \
            enter/exit latency, false enters/exits per beacon-hour, ranging error by true distance \
            and the proximity confusion matrix. Writes an SVG plot (see docs/evaluation.md).
            """)

    @Argument(help: "Scenario file (JSON).")
    var scenario: String

    @Option(help: "Simulated seconds (default: the scenario's duration).")
    var duration: Double?

    @Option(help: "Where to write the SVG plot (default: SCENARIO with .svg instead of .json).")
    var plot: String?

    func validate() throws {
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds, got \(duration)")
        }
    }

    func run() async throws {
        var loaded: Scenario
        do { loaded = try Scenario.load(contentsOf: URL(fileURLWithPath: scenario)) } catch {
            throw ScenarioFileError(message: "\(scenario): \(error)")
        }
        if let duration { loaded.duration = duration }
        let showProgress = isatty(STDERR_FILENO) == 1
        let report = Evaluation(scenario: loaded).run(progress: showProgress ? { fraction in
            FileHandle.standardError.write(Data("\revaluating: \(Int(fraction * 100)) % of \(Int(loaded.duration)) simulated s".utf8))
        } : nil)
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        try StandardOutput.line(report.text)
        let plotPath = plot ?? (scenario.hasSuffix(".json") ? String(scenario.dropLast(5)) : scenario) + ".svg"
        try Data(report.svg.utf8).write(to: URL(fileURLWithPath: plotPath))
        try StandardOutput.line("\nPlot: \(plotPath)")
    }
}
