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
    ("fleet", FleetBenchmark.run),
    ("fleet-server", FleetServerBenchmark.run),
    ("server-flood", { try await BenchServer.eachDatabase(FloodBenchmark.measure) }),
]

let wanted = Set(CommandLine.arguments.dropFirst())
for suite in suites where wanted.isEmpty || wanted.contains(suite.name) {
    print("== \(suite.name)")
    try await suite.run()
}
