import Foundation
import Testing
@testable import BeaconKit

/// The evidence rule (the default): entry on strong or confirmed packets, exit after the silence
/// the beacon's reception rate allows at ε = 10⁻⁴ false exits per beacon-hour.
@Suite struct EvidenceExitTests {
    private static let weak: Int8 = -95      // 5 dB above the −100 dBm sensitivity
    private static let strong: Int8 = -65    // 35 dB above it

    @Test func oneWeakPacketDoesNotEnterButTwoInTheWindowDo() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: 0, rssi: Self.weak)).isEmpty)
        // The confirmation lapses after the 10 s window: the next weak packet starts again.
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: 11, rssi: Self.weak)).isEmpty)
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: 12, rssi: Self.weak)).contains { $0.isEnter })
    }

    @Test func oneStrongPacketEntersAtOnce() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: 0, rssi: Self.strong)).contains { $0.isEnter })
        // Nothing more heard: one packet says nothing of a rate, so it waits the unconfirmed timeout.
        #expect(engine.exitTimeout(for: Fixture.identity()) == EvidenceExitParameters.default.unconfirmedTimeout)
    }

    @Test func theBoundMatchesItsFormula() {
        #expect(abs(EvidenceExitParameters.poissonBound(rate: 1) - log(3.6e7)) < 1e-9)
        #expect(EvidenceExitParameters.poissonBound(rate: 10) < EvidenceExitParameters.poissonBound(rate: 1))
        #expect(EvidenceExitParameters.poissonBound(rate: 0) == .infinity)
    }

    /// A 10 Hz beacon heard on a fraction of its packets: the timeout settles near Poisson's
    /// bound at the measured rate for weak reception, and far below it for full reception.
    @Test(arguments: [0.05, 0.1, 0.3, 1.0])
    func timeoutFollowsTheMeasuredRate(reception: Double) throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        var random = EngineRandom(seed: 7)
        var time = 0.0, heard = 0
        while time < 3600 {
            if random.uniform() < reception {
                _ = engine.receive(Fixture.sighting(Fixture.identity(), time: time, rssi: Self.weak))
                heard += 1
            }
            time += 0.1 + random.uniform() * 0.01
        }
        let rate = Double(heard) / time
        let bound = EvidenceExitParameters.poissonBound(rate: rate)
        let timeout = try #require(engine.exitTimeout(for: Fixture.identity()))
        #expect(timeout <= 1.2 * bound, "timeout \(timeout) s against T* \(bound) s at \(rate)/s")
        if reception <= 0.1 {
            #expect(timeout >= 0.7 * bound, "timeout \(timeout) s against T* \(bound) s at \(rate)/s")
        } else if reception == 1 {
            #expect(timeout == EvidenceExitParameters.default.floor)
        }
    }

    /// A receiver that saw a strong beacon drop out and come back (a body) keeps its other
    /// strong beacons longer; a receiver that never saw one exits them at the floor.
    @Test func aStrongDropoutTeachesTheReceiverForEveryStrongBeacon() throws {
        func run(withDropout: Bool) throws -> Double {
            var engine = BeaconEngine()
            try engine.startMonitoring(Fixture.region())
            var events: [BeaconEvent] = []
            var time = 0.0
            func hear(_ identity: BeaconIdentity, for seconds: Double) {
                for _ in 0..<Int(seconds * 10) {
                    engine.receive(Fixture.sighting(identity, time: time, rssi: Self.strong), into: &events)
                    time += 0.1
                }
            }
            hear(Fixture.identity(1, 1), for: 20)
            if withDropout {
                time += 3        // blocked for 3 s: an exit at the 1 s floor, then back
                hear(Fixture.identity(1, 1), for: 5)
            }
            hear(Fixture.identity(1, 2), for: 20)
            return try #require(engine.exitTimeout(for: Fixture.identity(1, 2)))
        }
        let fresh = try run(withDropout: false)
        let taught = try run(withDropout: true)
        #expect(fresh == EvidenceExitParameters.default.floor)
        #expect(taught >= 1.5 * 3 * 0.9, "learned timeout \(taught) s")
    }

    @Test func aWeakBeaconSilentAfterADropoutIsNotHeldByTheReceiversMemory() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        var time = 0.0
        for _ in 0..<200 { _ = engine.receive(Fixture.sighting(Fixture.identity(1, 1), time: time, rssi: Self.strong)); time += 0.1 }
        time += 3
        for _ in 0..<50 { _ = engine.receive(Fixture.sighting(Fixture.identity(1, 1), time: time, rssi: Self.strong)); time += 0.1 }
        for _ in 0..<200 { _ = engine.receive(Fixture.sighting(Fixture.identity(1, 3), time: time, rssi: Self.weak)); time += 0.1 }
        #expect(engine.exitTimeout(for: Fixture.identity(1, 3)) == EvidenceExitParameters.default.floor)
    }

    @Test func evidenceStateSurvivesACheckpoint() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        var time = 0.0
        for _ in 0..<100 { _ = engine.receive(Fixture.sighting(Fixture.identity(), time: time, rssi: Self.strong)); time += 0.1 }
        time += 3
        for _ in 0..<100 { _ = engine.receive(Fixture.sighting(Fixture.identity(), time: time, rssi: Self.strong)); time += 0.3 }
        let data = try JSONEncoder().encode(engine.checkpoint)
        let restored = try BeaconEngine(restoring: JSONDecoder().decode(EngineCheckpoint.self, from: data))
        #expect(restored.exitTimeout(for: Fixture.identity()) == engine.exitTimeout(for: Fixture.identity()))
        #expect(restored.receiverDropout == engine.receiverDropout)
        #expect(restored.checkpoint == engine.checkpoint)
    }
}

extension EvidenceExitTests {
    @Test func stateStaysWithinTheBudgetPerBeacon() {
        #expect(MemoryLayout<TrackedBeacon>.stride <= 256)
        #expect(MemoryLayout<PresenceEvidence>.stride <= 32)
    }
}

extension EvidenceExitTests {
    @Test func aPacketWithoutRSSIEntersAsTheFixedRulesDo() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: 0, rssi: nil)).contains { $0.isEnter })
    }
}
