// Benchmarks: `swift run -c release proxima-bench [suite]`. Figures go into BENCHMARKS.md.
// Each suite lives in its own file and is registered here.
let suites: [(name: String, run: () async throws -> Void)] = [
    ("simulator", SimulatorBenchmark.run),
    ("engine", { try EngineBenchmark.run() }),
    ("hci", HCIBenchmark.run),
    ("codec", CodecBenchmark.run),
    ("server", ServerBenchmark.run),
    ("locate", LocateBenchmark.run),
    ("positions", PositionBenchmark.run),
    ("calibration", { try CalibrationBenchmark.run() }),
    ("fleet", FleetBenchmark.run),
    ("fleet-server", FleetServerBenchmark.run),
    ("server-flood", { try await BenchServer.eachDatabase(FloodBenchmark.measure) }),
    ("help-latency", HelpLatencyBenchmark.run),
    ("server-instances", InstancesBenchmark.run),
    ("edge-traffic", EdgeTrafficBenchmark.run),
    ("overload", OverloadBenchmark.run),
    ("webhooks", WebhookBenchmark.run),
]

// `fleet-week`, `queue-day` and `soak` take arguments of their own (FleetWeekRun.swift, QueueDayRun.swift, SoakRun.swift).
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "fleet-week" {
    try await FleetWeekRun.run(Array(arguments.dropFirst()))
} else if arguments.first == "soak" {
    try await SoakRun.run(Array(arguments.dropFirst()))
} else if arguments.first == "queue-day" {
    try await QueueDayRun.run(Array(arguments.dropFirst()))
} else {
    let wanted = Set(arguments)
    for suite in suites where wanted.isEmpty || wanted.contains(suite.name) {
        print("== \(suite.name)")
        try await suite.run()
    }
}
