import Foundation
import Testing

/// `--map` takes a scenario file: a scenario with rooms is its own site map.
@Suite struct ScenarioAsMapTests {
    @Test func routeReadsTheOfficeScenarioAsAMap() async throws {
        let office = SimulatorCommandTests.examples.appendingPathComponent("office.json").path
        let outcome = try await ProximaBinary.run(["route", "--map", office, "--from", "3,12", "--to", "kitchen"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("office A door") && outcome.standardOutput.contains("kitchen door"))
    }

    @Test func aFileThatIsNeitherKeepsTheMapError() async throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bad = directory.appendingPathComponent("bad.json")
        try Data(#"{"venue": {"width": 10, "height": 10}, "rooms": [{"name": "a", "polygon": []}]}"#.utf8).write(to: bad)
        let outcome = try await ProximaBinary.run(["route", "--map", bad.path, "--from", "1,1", "--to", "a"])
        #expect(outcome.status != 0 && outcome.standardError.contains("rooms[0].polygon"))
    }
}
