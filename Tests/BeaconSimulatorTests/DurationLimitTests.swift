import BeaconKit
import BeaconSimulator
import Foundation
import Testing

/// A duration given apart from the file (`--duration`, `Simulation.stream(duration:)`) has the
/// same limit as the file's `duration`.
@Suite struct DurationLimitTests {
    @Test func theFileAndTheStreamRefuseTheSameDuration() async throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        let tooLong = Scenario.Limits.duration * 10
        var document = try #require(try JSONSerialization.jsonObject(with: Data(minimalScenario.utf8)) as? [String: Any])
        document["duration"] = tooLong
        #expect(throws: ScenarioError.self) { try Scenario.decode(JSONSerialization.data(withJSONObject: document)) }

        var produced = 0
        var refusal: ScenarioError?
        do {
            // Bounded, so that a stream that accepted the duration ends the test instead of running for years.
            for try await _ in Simulation.stream(scenario, duration: tooLong) {
                produced += 1
                if produced == 100 { break }
            }
        } catch let error as ScenarioError {
            refusal = error
        }
        #expect(produced == 0)
        #expect(refusal?.path == "duration")
        #expect(refusal?.expected.contains("10000000") == true)
    }

    @Test func aDurationWithinTheLimitIsUsed() async throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        var last = 0.0
        for try await item in Simulation.stream(scenario, duration: 2) { last = item.sighting.time }
        #expect(last > 1 && last < 2)
    }
}
