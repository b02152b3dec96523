import Foundation
import Testing
@testable import BeaconKit

/// The evidence rule's packet path defers its model (logarithms) until a deadline needs it: the
/// deferred values must be exactly those the eager computation gave.
@Suite struct DeferredExitDeadlineTests {
    /// Gaps from 0.02 s to 6 s, with long runs of short ones, so that the model is due on the
    /// first 64 gaps, then every 16th, and some gaps pass a deferred refresh.
    private static func gaps(count: Int, seed: UInt64) -> [Float] {
        var random = EngineRandom(seed: seed)
        return (0..<count).map { _ in
            let draw = random.uniform()
            return Float(draw < 0.8 ? 0.02 + 0.2 * random.uniform() : draw < 0.97 ? 1 + random.uniform() : 6 * random.uniform())
        }
    }

    /// The model after every gap equals the one computed eagerly on the gap where it was last due.
    @Test(arguments: [UInt64(1), 2, 3])
    func theDeferredModelIsTheOneDueOnItsGap(seed: UInt64) {
        let rule = EvidenceHot(.default)
        var evidence = PresenceEvidence()
        var expected = Double.nan
        for (position, gap) in Self.gaps(count: 400, seed: seed).enumerated() {
            let countBefore = evidence.gapCount
            evidence.addGap(gap, parameters: rule)
            // Due: each of the first 64 gaps, then whenever the gaps-since-refresh counter restarts.
            if evidence.gapCount <= 64 || evidence.sinceRefresh == 0 {
                expected = Double(Float(evidence.modelTimeout(rule)))
            }
            #expect(evidence.gapCount == countBefore + 1)
            #expect(evidence.modelSilence(rule) == expected, "gap \(position)")
            #expect(Double(evidence.settledModel(rule)) == expected, "gap \(position)")
        }
    }

    /// After every packet of a beacon heard irregularly, strong and weak, with dropouts that
    /// teach the receiver: the deadline the checkpoint reports (the deferred one, completed) is
    /// the last packet's time plus the whole timeout, and the same after a restore.
    @Test(arguments: [UInt64(11), 12])
    func theCompletedDeadlineIsTheWholeTimeout(seed: UInt64) throws {
        var engine = BeaconEngine()
        // One region per beacon, so each beacon's exits are reported.
        for minor in UInt16(1)...3 { try engine.startMonitoring(Fixture.region("beacon-\(minor)", major: 1, minor: minor)) }
        var random = EngineRandom(seed: seed)
        var time = 0.0
        var events: [BeaconEvent] = []
        var checked = 0
        for (position, gap) in Self.gaps(count: 1500, seed: seed).enumerated() {
            time += Double(gap)
            // Now and then a silence past the 60 s ceiling: every beacon exits, checked on the
            // clock (the completed deadline), and comes back as a departure.
            if position % 300 == 299 { time += 70 }
            let identity = Fixture.identity(1, UInt16(1 + position % 3))
            let rssi: Int8 = random.uniform() < 0.7 ? -60 : -94
            engine.receive(Fixture.sighting(identity, time: time, rssi: rssi), into: &events)
            guard engine.isPresent(identity) else { continue }
            let saved = try #require(engine.checkpoint.beacons.first { $0.identity == identity })
            let timeout = try #require(engine.exitTimeout(for: identity))
            #expect(saved.exitDeadline == time + timeout, "packet \(position)")
            checked += 1
        }
        #expect(checked > 1000)
        #expect(events.contains { if case .didExit = $0 { true } else { false } })
        let restored = try BeaconEngine(restoring: engine.checkpoint)
        #expect(restored.checkpoint == engine.checkpoint)
    }
}
