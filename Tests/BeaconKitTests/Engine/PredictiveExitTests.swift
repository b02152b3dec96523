import Foundation
import Testing
@testable import BeaconKit

/// The evidence rule's predictive bound and its memory of the pair's own tail: a rate learnt from
/// few gaps is not trusted as if known, a restarted beacon keeps what its link taught, and a pair
/// whose silences come in bursts learns to wait them out.
@Suite struct PredictiveExitTests {
    private static let weak: Int8 = -95

    /// A 10 Hz beacon (0–10 ms advertising delay) heard on a fraction of its events from `start`
    /// for `seconds`, except inside the blackouts; returns the time of the last packet heard.
    @discardableResult
    private static func hear(_ engine: inout BeaconEngine, events: inout [BeaconEvent], from start: Double, for seconds: Double,
                             reception: Double, random: inout EngineRandom, rssi: Int8 = weak,
                             blackout: (every: Double, length: Double)? = nil) -> Double {
        var time = start, last = start
        var nextTick = start
        while time < start + seconds {
            while nextTick <= time {
                engine.advance(to: nextTick, into: &events)
                nextTick += 0.1
            }
            let phase = blackout.map { (time - start).truncatingRemainder(dividingBy: $0.every) }
            let blocked = blackout.map { phase! >= $0.every - $0.length } ?? false
            if !blocked && random.uniform() < reception {
                engine.receive(Fixture.sighting(Fixture.identity(), time: time, rssi: rssi), into: &events)
                last = time
            }
            time += 0.1 + random.uniform() * 0.01
        }
        return last
    }

    /// A steady pair: after an hour at 20 % of a 10 Hz beacon's events, the beacon stops, and the
    /// exit comes near Poisson's bound at the pair's measured rate.
    @Test(arguments: [UInt64(1), 2, 3])
    func aSteadyPairExitsNearTheBound(seed: UInt64) throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        var events: [BeaconEvent] = []
        var random = EngineRandom(seed: seed)
        let last = Self.hear(&engine, events: &events, from: 0, for: 3600, reception: 0.2, random: &random)
        let falseExits = events.filter(\.isExit).count
        #expect(falseExits == 0, "\(falseExits) false exits in the hour")
        let rate = 0.2 / 0.105
        engine.advance(to: last + 120, into: &events)
        let exit = try #require(events.last { $0.isExit })
        let bound = EvidenceExitParameters.poissonBound(rate: rate)
        #expect(exit.time - last >= 0.7 * bound && exit.time - last <= 1.2 * bound,
                "exit \(exit.time - last) s after the last packet against T* \(bound) s")
    }

    /// A pair whose reception breaks off for 5 s every minute (a door, a scanner parked on a bad
    /// channel) at a rate whose model alone would exit after about 3 s: the first blackout may
    /// cost one exit, after which the pair's own tail holds it through every later one.
    @Test func aPairWithBurstyGapsLearnsALongerTailAndStopsFalselyExiting() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        var events: [BeaconEvent] = []
        var random = EngineRandom(seed: 5)
        Self.hear(&engine, events: &events, from: 0, for: 3600, reception: 0.5, random: &random, blackout: (60, 5))
        let exits = events.filter(\.isExit).count
        #expect(exits <= 1, "\(exits) false exits over 60 blackouts")
        let bursty = try #require(engine.exitTimeout(for: Fixture.identity()))

        var steadyEngine = BeaconEngine()
        try steadyEngine.startMonitoring(Fixture.region())
        var steadyEvents: [BeaconEvent] = []
        var steadyRandom = EngineRandom(seed: 5)
        Self.hear(&steadyEngine, events: &steadyEvents, from: 0, for: 3600, reception: 0.5, random: &steadyRandom)
        let steady = try #require(steadyEngine.exitTimeout(for: Fixture.identity()))
        #expect(bursty > 5 && bursty > steady, "bursty \(bursty) s, steady \(steady) s")
    }

    /// Three packets a period apart say next to nothing of a rate: the old model read them as a
    /// beacon heard on every event and exited at the floor.
    @Test func threeBackToBackPacketsDoNotProveAFullRate() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        for time in [0.0, 0.1, 0.2] { _ = engine.receive(Fixture.sighting(Fixture.identity(), time: time)) }
        let timeout = try #require(engine.exitTimeout(for: Fixture.identity()))
        #expect(timeout >= 10 * EvidenceExitParameters.default.floor, "timeout \(timeout) s")
    }

    /// With more gaps the predictive bound falls towards the known-rate bound: the same pair is
    /// given a shorter timeout after an hour than after 15 s.
    @Test func theBoundTightensAsGapsAccumulate() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        var events: [BeaconEvent] = []
        var random = EngineRandom(seed: 9)
        let last = Self.hear(&engine, events: &events, from: 0, for: 15, reception: 0.1, random: &random)
        let early = try #require(engine.exitTimeout(for: Fixture.identity()))
        Self.hear(&engine, events: &events, from: last + 0.1, for: 3600, reception: 0.1, random: &random)
        let late = try #require(engine.exitTimeout(for: Fixture.identity()))
        #expect(early > 1.3 * late, "after 15 s \(early) s, after an hour \(late) s")
    }

    /// With a rate memory (off by default), a fixed gateway's restarted beacon is judged by what
    /// the link taught before three minutes off, not by its first two gaps.
    @Test func aRestartedBeaconKeepsWhatItsLinkTaughtWithARateMemory() throws {
        func timeoutAfterRestart(history: Bool) throws -> Double {
            var engine = BeaconEngine(configuration: EngineConfiguration(exitRule: .evidence(EvidenceExitParameters(rateMemory: 900))))
            try engine.startMonitoring(Fixture.region())
            var events: [BeaconEvent] = []
            var random = EngineRandom(seed: 11)
            var start = 0.0
            if history {
                start = Self.hear(&engine, events: &events, from: 0, for: 1800, reception: 0.1, random: &random) + 180
                engine.advance(to: start, into: &events)
            }
            for time in [start, start + 0.8, start + 2.1] {
                engine.receive(Fixture.sighting(Fixture.identity(), time: time, rssi: Self.weak), into: &events)
            }
            return try #require(engine.exitTimeout(for: Fixture.identity()))
        }
        let restarted = try timeoutAfterRestart(history: true)
        let fresh = try timeoutAfterRestart(history: false)
        let bound = EvidenceExitParameters.poissonBound(rate: 0.1 / 0.105)
        #expect(restarted <= 1.3 * bound, "restarted \(restarted) s against T* \(bound) s")
        #expect(fresh > 2 * restarted, "fresh \(fresh) s")
    }
}
