import Foundation
import Testing
@testable import BeaconKit

@Suite struct CheckpointTests {
    /// Three beacons at different rates and levels; one stops at 40 s, one starts at 50 s.
    private func stream(seed: UInt64) -> [Sighting] {
        var random = EngineRandom(seed: seed)
        var sightings: [Sighting] = []
        for (minor, rate, level, from, until) in [(1, 10.0, -60.0, 0.0, 40.0), (2, 2.0, -75.0, 0.0, 120.0), (3, 8.0, -85.0, 50.0, 120.0)] {
            var time = from
            while time < until {
                if random.uniform() < 0.8 {
                    let rssi = Int8(clamping: Int((level + random.gaussian(sigma: 4)).rounded()))
                    sightings.append(Fixture.sighting(Fixture.identity(1, UInt16(minor)), time: time, rssi: rssi))
                }
                time += 1 / rate + random.uniform() * 0.01
            }
        }
        return sightings.sorted { $0.time < $1.time }
    }

    @Test func restoredEngineContinuesExactlyLikeTheOriginal() throws {
        var original = BeaconEngine()
        try original.startMonitoring(Fixture.region("site", major: 1))
        try original.startMonitoring(Fixture.region("three", major: 1, minor: 3))
        original.startRanging(Fixture.region("site", major: 1))
        let sightings = stream(seed: 9)
        let half = sightings.firstIndex { $0.time >= 45 }!
        var discarded: [BeaconEvent] = []
        for sighting in sightings[..<half] { original.receive(sighting, into: &discarded) }

        let data = try JSONEncoder().encode(original.checkpoint)
        var restored = try BeaconEngine(restoring: try JSONDecoder().decode(EngineCheckpoint.self, from: data))
        #expect(restored.monitoredRegions == original.monitoredRegions)
        #expect(restored.state(for: "site") == original.state(for: "site"))

        var expected: [BeaconEvent] = [], actual: [BeaconEvent] = []
        for sighting in sightings[half...] {
            original.receive(sighting, into: &expected)
            restored.receive(sighting, into: &actual)
        }
        original.advance(to: 200, into: &expected)
        restored.advance(to: 200, into: &actual)
        #expect(expected.count > 60)
        #expect(expected.contains { $0.isExit } && expected.contains { $0.isEnter })
        #expect(actual == expected)
    }

    @Test func checkpointOfAFreshEngineRestores() throws {
        let data = try JSONEncoder().encode(BeaconEngine().checkpoint)
        var engine = try BeaconEngine(restoring: try JSONDecoder().decode(EngineCheckpoint.self, from: data))
        try engine.startMonitoring(Fixture.region())
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: 3)).contains { $0.isEnter })
    }

    @Test func unknownVersionIsRefused() throws {
        var checkpoint = BeaconEngine().checkpoint
        checkpoint.version = 99
        #expect(throws: CheckpointError.self) { try BeaconEngine(restoring: checkpoint) }
    }
}
