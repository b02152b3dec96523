import Foundation
import Testing

/// `proxima evaluate --monitoring-only --default-only`: the longest runs measure the default alone.
@Suite struct EvaluateDefaultOnlyTests {
    @Test func defaultOnlyMeasuresTheDefaultAlone() async throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plot = directory.appendingPathComponent("plot.svg").path
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let outcome = try await ProximaBinary.run(["evaluate", museum, "--duration", "60", "--monitoring-only", "--default-only", "--svg", plot])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("default: Kalman, robust log-distance, evidence exit"))
        #expect(!outcome.standardOutput.contains("exit: fixed 10 s (AltBeacon)"))
    }

    @Test func defaultOnlyWithoutMonitoringOnlyIsRefused() async throws {
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let outcome = try await ProximaBinary.run(["evaluate", museum, "--default-only"])
        #expect(outcome.status != 0)
        #expect(outcome.standardError.contains("--default-only needs --monitoring-only"))
    }

    @Test func positionsOnlyPrintsThePositionsAndRoomsAlone() async throws {
        let home = SimulatorCommandTests.examples.appendingPathComponent("home.json").path
        let outcome = try await ProximaBinary.run(["evaluate", home, "--duration", "30", "--positions-only"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("Positions and rooms"))
        #expect(outcome.standardOutput.contains("room filter (default)"))
        #expect(!outcome.standardOutput.contains("default: Kalman, robust log-distance, evidence exit"))
        #expect(!outcome.standardOutput.contains("Plot:"))
    }

    @Test func positionsOnlyIsRefusedWithoutAMapOrWithOtherOutputs() async throws {
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let withoutMap = try await ProximaBinary.run(["evaluate", museum, "--duration", "10", "--positions-only"])
        #expect(withoutMap.status != 0)
        #expect(withoutMap.standardError.contains("no map with two or more fixed receivers"), "\(withoutMap.standardError)")
        let withJSON = try await ProximaBinary.run(["evaluate", museum, "--positions-only", "--json"])
        #expect(withJSON.status != 0)
        #expect(withJSON.standardError.contains("--positions-only"), "\(withJSON.standardError)")
    }

    @Test func seedsPoolRunsOfThePositionsSection() async throws {
        let home = SimulatorCommandTests.examples.appendingPathComponent("home.json").path
        let outcome = try await ProximaBinary.run(["evaluate", home, "--duration", "20", "--positions-only", "--seeds", "2"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("Pooled over 2 runs, seeds 11, 12"), "\(outcome.standardOutput)")
        #expect(outcome.standardOutput.contains("room filter (default)"))
    }

    @Test func seedsAreRefusedOutOfRangeOrWithoutPositionsOnly() async throws {
        let home = SimulatorCommandTests.examples.appendingPathComponent("home.json").path
        let withoutPositions = try await ProximaBinary.run(["evaluate", home, "--seeds", "2"])
        #expect(withoutPositions.status != 0)
        #expect(withoutPositions.standardError.contains("--seeds needs --positions-only"), "\(withoutPositions.standardError)")
        for count in ["0", "65"] {
            let outOfRange = try await ProximaBinary.run(["evaluate", home, "--positions-only", "--seeds", count])
            #expect(outOfRange.status != 0)
            #expect(outOfRange.standardError.contains("--seeds: \(count) is outside 1-64"), "\(outOfRange.standardError)")
        }
    }

    @Test func theTagRoomCycleIsAnOptionOfThePositionsSection() async throws {
        let home = SimulatorCommandTests.examples.appendingPathComponent("home.json").path
        let half = try await ProximaBinary.run(["evaluate", home, "--duration", "20", "--positions-only"])
        #expect(half.status == 0, "\(half.standardError)")
        #expect(half.standardOutput.contains("carried beacons' room filters every 0.5 s"), "\(half.standardOutput)")
        let whole = try await ProximaBinary.run(["evaluate", home, "--duration", "20", "--positions-only", "--tag-room-cycle", "1"])
        #expect(whole.status == 0, "\(whole.standardError)")
        #expect(!whole.standardOutput.contains("carried beacons' room filters every"), "\(whole.standardOutput)")
        #expect(whole.standardOutput.contains("room filter (default)"))
        for value in ["0.05", "11", "nan"] {
            let refused = try await ProximaBinary.run(["evaluate", home, "--positions-only", "--tag-room-cycle", value])
            #expect(refused.status != 0)
            #expect(refused.standardError.contains("--tag-room-cycle"), "\(refused.standardError)")
        }
        let monitoring = try await ProximaBinary.run(["evaluate", home, "--monitoring-only", "--tag-room-cycle", "1"])
        #expect(monitoring.status != 0)
        #expect(monitoring.standardError.contains("--tag-room-cycle applies to the positions and rooms section"), "\(monitoring.standardError)")
    }
}
