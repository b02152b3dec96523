import BeaconKit

extension SightingSource {
    /// A simulated venue's sightings, on the simulation's own clock.
    public static func simulation(_ scenario: Scenario, pacing: Pacing = .virtual) -> SightingSource {
        SightingSource(sightings: Simulation.sightings(scenario, pacing: pacing), timing: .recorded)
    }
}
