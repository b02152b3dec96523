import Foundation
import Testing
@testable import BeaconKit

@Suite struct MonitoringTests {
    @Test func enterHappensOnTheFirstPacket() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        let clock = MockClock()
        let events = engine.receive(Fixture.sighting(Fixture.identity(), time: clock.now))
        #expect(events == [.didEnter(Fixture.region(), time: clock.now)])
        #expect(engine.state(for: "site") == .inside)
    }

    @Test func entryEvidenceWaitsForThatManyPackets() throws {
        var engine = BeaconEngine(configuration: .init(entryEvidence: 3))
        try engine.startMonitoring(Fixture.region())
        var clock = MockClock()
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: clock.now)).isEmpty)
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: clock.advance(by: 0.1))).isEmpty)
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: clock.advance(by: 0.1))).contains { $0.isEnter })
    }

    @Test func entryEvidenceLapsesWhenPacketsStop() throws {
        var engine = BeaconEngine(configuration: .init(exitRule: .fixedDelay(seconds: 2), entryEvidence: 2))
        try engine.startMonitoring(Fixture.region())
        var clock = MockClock()
        _ = engine.receive(Fixture.sighting(Fixture.identity(), time: clock.now))
        // A second packet 5 s later is a new first packet, not the second piece of evidence.
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: clock.advance(by: 5))).isEmpty)
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: clock.advance(by: 1))).contains { $0.isEnter })
    }

    /// Feeds a beacon at `rate` Hz (with the 0–10 ms random advertising delay) until `stop`,
    /// ticking the engine every 100 ms; returns the enter and exit events.
    private func run(engine: inout BeaconEngine, rate: Double, until stop: Double, end: Double,
                     reception: Double = 1, seed: UInt64 = 1) -> (events: [BeaconEvent], lastPacket: Double) {
        var random = EngineRandom(seed: seed)
        var events: [BeaconEvent] = []
        var packet = 0.0, tick = 0.0, lastPacket = -1.0
        let beacon = Fixture.identity()
        while true {
            let nextPacket = packet < stop ? packet : .infinity
            if nextPacket <= tick {
                if random.uniform() < reception {
                    engine.receive(Fixture.sighting(beacon, time: nextPacket), into: &events)
                    lastPacket = nextPacket
                }
                packet += 1 / rate + random.uniform() * 0.01
            } else {
                if tick > end { break }
                engine.advance(to: tick, into: &events)
                tick += 0.1
            }
        }
        return (events.filter { $0.isEnter || $0.isExit }, lastPacket)
    }

    @Test func beaconHeardAt10HzThatStopsExitsWithinTwoSeconds() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        let (events, lastPacket) = run(engine: &engine, rate: 10, until: 60, end: 120)
        #expect(events.count == 2)
        #expect(events.first?.isEnter == true)
        let exit = try #require(events.last)
        #expect(exit.isExit)
        #expect(exit.time - lastPacket <= 2, "exit \(exit.time - lastPacket) s after the last packet")
        #expect(exit.time - lastPacket >= 1, "no exit before the 1 s floor")
    }

    @Test func beaconHeardEightTimesASecondIsGoneAfterOneSecondOfSilence() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        let (events, lastPacket) = run(engine: &engine, rate: 8, until: 30, end: 60)
        let exit = try #require(events.last)
        #expect(exit.isExit)
        #expect(exit.time - lastPacket <= 1 + 1e-9)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func edgeOfRangeBeaconAtTenPercentForTenHoursNeverFalselyExits(seed: UInt64) throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        let tenHours = 10 * 3600.0
        let (events, _) = run(engine: &engine, rate: 10, until: tenHours, end: tenHours, reception: 0.1, seed: seed)
        #expect(events.count == 1, "expected only the entry, got \(events.count - 1) false exits")
        #expect(events.first?.isEnter == true)
    }

    @Test func edgeOfRangeBeaconStillExitsWithinTheCeiling() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        let (events, lastPacket) = run(engine: &engine, rate: 10, until: 600, end: 700, reception: 0.1)
        let exit = try #require(events.last)
        #expect(exit.isExit)
        #expect(exit.time - lastPacket <= 30.1)
        #expect(exit.time - lastPacket > 5)
    }

    @Test(arguments: [(ExitRule.altBeacon, 10.0), (ExitRule.iOSLike, 30.0)])
    func fixedDelayModesExitAfterTheirDelay(rule: ExitRule, delay: Double) throws {
        var engine = BeaconEngine(configuration: .init(exitRule: rule))
        try engine.startMonitoring(Fixture.region())
        let (events, lastPacket) = run(engine: &engine, rate: 10, until: 20, end: 80)
        let exit = try #require(events.last)
        #expect(exit.isExit)
        #expect(abs(exit.time - lastPacket - delay) < 1e-9, "the exit is dated when the silence reached the delay")
    }

    @Test func regionStaysInsideWhileAnyMatchingBeaconIsPresent() throws {
        var engine = BeaconEngine(configuration: .init(exitRule: .fixedDelay(seconds: 5)))
        try engine.startMonitoring(Fixture.region("site", major: 1))
        var events: [BeaconEvent] = []
        engine.receive(Fixture.sighting(Fixture.identity(1, 1), time: 0), into: &events)
        for second in 1...20 {
            engine.receive(Fixture.sighting(Fixture.identity(1, 2), time: Double(second)), into: &events)
        }
        #expect(events.filter(\.isEnter).count == 1)
        #expect(events.filter(\.isExit).isEmpty)
        engine.advance(to: 30, into: &events)
        #expect(events.filter(\.isExit).count == 1)
    }

    @Test func notifyFlagsSilenceEventsButStateFollows() throws {
        var engine = BeaconEngine(configuration: .init(exitRule: .fixedDelay(seconds: 5)))
        var region = Fixture.region()
        region.notifyOnEntry = false
        region.notifyOnExit = false
        try engine.startMonitoring(region)
        #expect(engine.receive(Fixture.sighting(Fixture.identity(), time: 0)).isEmpty)
        #expect(engine.state(for: "site") == .inside)
        #expect(engine.advance(to: 10).isEmpty)
        #expect(engine.state(for: "site") == .outside)
    }

    @Test func requestStateAndNotifyOnStartReportTheCurrentState() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region("first"))
        _ = engine.receive(Fixture.sighting(Fixture.identity(), time: 5))
        #expect(try engine.requestState(for: "first") == .didDetermineState(.inside, Fixture.region("first"), time: 5))
        var late = Fixture.region("late")
        late.notifyEntryStateOnStart = true
        // A region started while its beacon is present is inside at once, without an enter event.
        #expect(try engine.startMonitoring(late, at: 6) == [.didDetermineState(.inside, late, time: 6)])
        var elsewhere = Fixture.region("elsewhere", uuid: Fixture.otherUUID)
        elsewhere.notifyEntryStateOnStart = true
        #expect(try engine.startMonitoring(elsewhere, at: 6) == [.didDetermineState(.outside, elsewhere, time: 6)])
        #expect(throws: MonitoringError.unknownRegion(identifier: "nope")) { try engine.requestState(for: "nope") }
    }

    @Test func reentryAfterExitStartsFreshStatistics() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        var events: [BeaconEvent] = []
        var time = 0.0
        for _ in 0..<100 { engine.receive(Fixture.sighting(Fixture.identity(), time: time), into: &events); time += 0.1 }
        time += 120
        engine.advance(to: time, into: &events)
        for _ in 0..<100 { engine.receive(Fixture.sighting(Fixture.identity(), time: time), into: &events); time += 0.1 }
        // The 120 s absence is not a gap of the beacon's pattern: it exits fast again.
        engine.advance(to: time + 2, into: &events)
        #expect(events.filter(\.isEnter).count == 2)
        #expect(events.filter(\.isExit).count == 2)
    }

    @Test func aDropoutThatEndsInAQuickReturnLengthensTheNextTimeout() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region())
        var events: [BeaconEvent] = []
        var time = 0.0
        func hear(for seconds: Double) {
            for _ in 0..<Int(seconds * 10) { engine.receive(Fixture.sighting(Fixture.identity(), time: time), into: &events); time += 0.1 }
        }
        hear(for: 10)
        time += 2.5  // a body blocks the beacon: at 10 Hz, 2.5 s of silence is an exit
        hear(for: 10)
        #expect(events.filter(\.isExit).count == 1)
        #expect(events.filter(\.isEnter).count == 2)
        // The same dropout again, soon after: the first one taught the rule that this beacon
        // drops out, so it stays.
        time += 2.5
        hear(for: 10)
        #expect(events.filter(\.isExit).count == 1, "the beacon flapped out a second time")
        // It still leaves when it really goes, within the ceiling.
        engine.advance(to: time + 31, into: &events)
        #expect(events.filter(\.isExit).count == 2)
    }

    @Test func managerActorPublishesEvents() async throws {
        let manager = BeaconManager(configuration: .init(exitRule: .fixedDelay(seconds: 1)))
        try await manager.startMonitoring(Fixture.region())
        await manager.receive(Fixture.sighting(Fixture.identity(), time: 0))
        await manager.advance(to: 5)
        #expect(try await manager.requestState(for: "site") == .outside)
        await manager.finish()
        var received: [BeaconEvent] = []
        for await event in manager.events { received.append(event) }
        #expect(received.map(\.isEnter) == [true, false, false])
        #expect(received[1].isExit)
    }
}
