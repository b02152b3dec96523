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
            and the proximity confusion matrix. Writes an SVG plot into the current directory, \
            named after the scenario (retail.json gives retail.svg), or to --svg PATH; never \
            beside the scenario, which may be a read-only or shared folder (see docs/evaluation.md).
            """)

    @Argument(help: "Scenario file (JSON).")
    var scenario: String

    @Option(help: "Simulated seconds (default: the scenario's duration).")
    var duration: Double?

    @Option(name: [.customLong("svg"), .customLong("plot")],
            help: ArgumentHelp("Where to write the SVG plot (default: the scenario's file name with .svg, in the current directory).",
                               valueName: "path"))
    var svg: String?

    @Flag(help: "Print the whole report as one JSON object (docs/evaluation.md) instead of the text tables; the plot is written only with --svg.")
    var json = false

    @Flag(help: "Measure only the monitoring configurations (exit rules), which is much faster: for long runs such as the switched-off benchmark.")
    var monitoringOnly = false

    @Flag(help: "With --monitoring-only: only the default configuration, several times faster, for the longest runs.")
    var defaultOnly = false

    @Flag(help: "Only the positions and rooms section (scenarios with a map): skips the engine's tables and the plot.")
    var positionsOnly = false

    @Option(help: ArgumentHelp("With --positions-only: pool this many runs, the scenario's seed and the ones after it (1-\(LocationEvaluation.maximumSeeds)); one run's p95 of about 50 room changes is its third-slowest change.",
                               valueName: "count"))
    var seeds: Int?

    @Option(help: ArgumentHelp("Seconds per room decision of a carried beacon (\(LocationEvaluation.tagRoomCycles.lowerBound)-\(LocationEvaluation.tagRoomCycles.upperBound), default 0.5); phones decide once a second. 1 gives the design before half-second cycles.",
                               valueName: "seconds"))
    var tagRoomCycle: Double?

    func validate() throws {
        if let seeds {
            guard positionsOnly else { throw ValidationError("--seeds needs --positions-only") }
            guard (1...LocationEvaluation.maximumSeeds).contains(seeds) else {
                throw ValidationError("--seeds: \(seeds) is outside 1-\(LocationEvaluation.maximumSeeds)")
            }
        }
        if let tagRoomCycle, !(tagRoomCycle.isFinite && LocationEvaluation.tagRoomCycles.contains(tagRoomCycle)) {
            throw ValidationError("--tag-room-cycle: \(tagRoomCycle) is outside \(LocationEvaluation.tagRoomCycles.lowerBound)-\(LocationEvaluation.tagRoomCycles.upperBound) seconds")
        }
        if tagRoomCycle != nil && monitoringOnly { throw ValidationError("--tag-room-cycle applies to the positions and rooms section: not with --monitoring-only") }
        if positionsOnly && (monitoringOnly || json || svg != nil) { throw ValidationError("--positions-only prints only the positions and rooms text: without --monitoring-only, --json or --svg") }
        if defaultOnly && !monitoringOnly { throw ValidationError("--default-only needs --monitoring-only") }
        if let duration {
            do { try Scenario.checkDuration(duration, field: "--duration") } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        var loaded: Scenario
        do { loaded = try Scenario.load(contentsOf: URL(fileURLWithPath: scenario)) } catch {
            throw ScenarioFileError(message: "\(scenario): \(error)")
        }
        if let duration { loaded.duration = duration }
        let showProgress = isatty(STDERR_FILENO) == 1
        if positionsOnly {
            var location = locationEvaluation(loaded)
            location.seeds = seeds ?? 1
            guard location.applies else { throw ValidationError("\(scenario) has no map with two or more fixed receivers: no positions to evaluate") }
            try StandardOutput.line(location.run().text)
            return
        }
        var variants = monitoringOnly ? Evaluation.monitoringVariants : Evaluation.Variant.standard
        if defaultOnly { variants = Array(variants.prefix(1)) }
        let report = Evaluation(scenario: loaded, variants: variants).run(progress: showProgress ? { fraction in
            FileHandle.standardError.write(Data("\revaluating: \(Int(fraction * 100)) % of \(Int(loaded.duration)) simulated s".utf8))
        } : nil)
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if json {
            try StandardOutput.line(String(decoding: try report.jsonData(), as: UTF8.self))
            if let svg { try Data(report.svg.utf8).write(to: URL(fileURLWithPath: svg)) }
            return
        }
        try StandardOutput.line(report.text)
        let location = locationEvaluation(loaded)
        if location.applies {
            // Positions, rooms and calibration: docs/evaluation.md, "Positions and rooms".
            try StandardOutput.line("\n" + location.run().text)
        }
        let plotPath = svg ?? Self.defaultPlotName(scenario: scenario)
        try Data(report.svg.utf8).write(to: URL(fileURLWithPath: plotPath))
        try StandardOutput.line("\nPlot: \(plotPath)")
    }

    /// The positions-and-rooms evaluation of `scenario` as both forms of the command run it:
    /// the server's own tracker scored beside the library's deciders.
    private func locationEvaluation(_ scenario: Scenario) -> LocationEvaluation {
        var location = LocationEvaluation(scenario: scenario)
        location.siteTrackers = SiteTrackerRoomDecider.evaluated()
        if let tagRoomCycle { location.tagRoomCycle = tagRoomCycle }
        return location
    }

    /// The scenario's file name with `.svg` for `.json`, without its folder: the plot is output
    /// of this run and belongs where the user runs it, not beside the input.
    static func defaultPlotName(scenario: String) -> String {
        let name = URL(fileURLWithPath: scenario).lastPathComponent
        return (name.hasSuffix(".json") ? String(name.dropLast(5)) : name) + ".svg"
    }
}
