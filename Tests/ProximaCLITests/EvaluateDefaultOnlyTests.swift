import Foundation
import Testing

/// `proxima evaluate --monitoring-only --default-only`: the longest runs measure the default alone.
@Suite struct EvaluateDefaultOnlyTests {
    @Test func defaultOnlyMeasuresTheDefaultAlone() throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plot = directory.appendingPathComponent("plot.svg").path
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let outcome = try ProximaBinary.run(["evaluate", museum, "--duration", "60", "--monitoring-only", "--default-only", "--svg", plot])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("default: Kalman, robust log-distance, evidence exit"))
        #expect(!outcome.standardOutput.contains("exit: fixed 10 s (AltBeacon)"))
    }

    @Test func defaultOnlyWithoutMonitoringOnlyIsRefused() throws {
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let outcome = try ProximaBinary.run(["evaluate", museum, "--default-only"])
        #expect(outcome.status != 0)
        #expect(outcome.standardError.contains("--default-only needs --monitoring-only"))
    }
}
