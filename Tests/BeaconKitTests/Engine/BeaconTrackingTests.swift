import Foundation
import Testing
@testable import BeaconKit

/// An engine that follows every beacon it hears, within a retention limit: what a server's
/// gateway runs, where the identities are not chosen (issue 9, item 1).
@Suite struct BeaconTrackingTests {
    /// The n-th identity of a flood: every UUID, major and minor differ from its neighbours'.
    static func floodIdentity(_ n: Int) -> BeaconIdentity {
        Fixture.identity(UInt16(n / 65_536), UInt16(n % 65_536), uuid: UUID(uuid: (
            UInt8(n & 0xFF), UInt8((n >> 8) & 0xFF), UInt8((n >> 16) & 0xFF), 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1)))
    }

    static func tracking(limit: Int?) -> BeaconEngine {
        var engine = BeaconEngine()
        engine.followsEveryBeacon = true
        engine.retention = BeaconRetention(limit: limit, forgetsSilentBeacons: true)
        return engine
    }

    @Test func everyBeaconEntersAndExitsWithoutRegions() {
        var engine = Self.tracking(limit: nil)
        let one = Fixture.identity(1, 1), two = Fixture.identity(1, 2)
        var events: [BeaconEvent] = []
        for time in stride(from: 0.0, through: 10, by: 1) {
            engine.receive(Fixture.sighting(one, time: time), into: &events)
            if time >= 5 { engine.receive(Fixture.sighting(two, time: time), into: &events) }
        }
        engine.advance(to: 100, into: &events)
        let activity = engine.takeActivity()
        // No regions, so no region events: the beacons' own changes come from takeActivity.
        #expect(events.isEmpty)
        #expect(activity.presence.map { "\($0.transition) \($0.identity.minor)" } == ["enter 1", "enter 2", "exit 1", "exit 2"])
        #expect(activity.presence.map(\.time) == [0, 5, activity.presence[2].time, activity.presence[3].time])
        #expect(Set(activity.readings.map(\.identity)) == [one, two])
        #expect(activity.readings.allSatisfy { $0.packetCount > 0 })
        #expect(engine.work.fullMatchRebuilds == 0)
        #expect(engine.takeActivity() == BeaconActivity())
    }

    /// 70,000 distinct identities, 500 per batch: past the 65,535 regions that stopped the old
    /// server, and far past the limit. State, changes per batch and matching stay bounded.
    @Test func aFloodOfIdentitiesStaysWithinTheLimit() {
        let limit = 2_000, batch = 500, total = 70_000
        var engine = Self.tracking(limit: limit)
        var events: [BeaconEvent] = []
        var changesPerBatch: [Int] = [], headerSizes: [Int] = [], largest = 0
        for start in stride(from: 0, to: total, by: batch) {
            for n in start..<(start + batch) {
                // Ten sightings a second; each identity heard twice so it enters.
                let time = Double(n) / 10
                engine.receive(Fixture.sighting(Self.floodIdentity(n), time: time), into: &events)
                engine.receive(Fixture.sighting(Self.floodIdentity(n), time: time + 0.01), into: &events)
            }
            events.removeAll(keepingCapacity: true)
            _ = engine.takeActivity()
            let changes = engine.takeChanges()
            changesPerBatch.append(changes.changed.count + changes.forgotten.count)
            headerSizes.append(engine.checkpointHeader.beaconCount + engine.checkpointHeader.monitored.count)
            largest = max(largest, engine.trackedBeaconCount)
        }
        #expect(largest <= limit)
        #expect(engine.work.beaconsForgotten >= total - limit)
        #expect(engine.work.fullMatchRebuilds == 0)
        #expect(headerSizes.allSatisfy { $0 == 0 })
        #expect(engine.checkpoint.beaconCount <= limit)
        // Work per batch: the first batch creates 500 records; a later one touches the batch's
        // own beacons, those that exited and those forgotten for them, never all heard so far.
        let first = changesPerBatch[0], last = changesPerBatch[changesPerBatch.count - 1]
        #expect(first >= batch)
        #expect(changesPerBatch.max()! <= 3 * first, "\(changesPerBatch)")
        #expect(last <= 3 * first)
    }

    @Test func presentBeaconsAreNeverForgottenAndNewOnesWaitForRoom() {
        var engine = Self.tracking(limit: 4)
        var events: [BeaconEvent] = []
        for minor in 1...4 {
            engine.receive(Fixture.sighting(Fixture.identity(1, UInt16(minor)), time: 0), into: &events)
            engine.receive(Fixture.sighting(Fixture.identity(1, UInt16(minor)), time: 0.5), into: &events)
        }
        #expect((1...4).allSatisfy { engine.isPresent(Fixture.identity(1, UInt16($0))) })
        engine.receive(Fixture.sighting(Fixture.identity(1, 5), time: 1), into: &events)
        #expect(engine.index(of: Fixture.identity(1, 5)) == nil)
        #expect(engine.work.untrackedSightings == 1)
        #expect(engine.trackedBeaconCount == 4)
        // Once the four have exited, the newcomer takes the place of the longest silent.
        engine.receive(Fixture.sighting(Fixture.identity(1, 4), time: 20), into: &events)
        engine.advance(to: 60, into: &events)
        engine.receive(Fixture.sighting(Fixture.identity(1, 5), time: 61), into: &events)
        #expect(engine.index(of: Fixture.identity(1, 5)) != nil)
        #expect(engine.trackedBeaconCount <= 4)
    }

    /// A checkpoint saved as a header plus the changed rows of each batch (deleting forgotten
    /// ones) restores an engine that continues exactly like the live one.
    @Test func checkpointDeltasRebuildTheEngine() throws {
        var live = Self.tracking(limit: 50)
        var rows: [BeaconIdentity: EngineCheckpoint.Beacon] = [:]
        var random = EngineRandom(seed: 4)
        var events: [BeaconEvent] = []
        var time = 0.0
        func feed(_ engine: inout BeaconEngine, _ sightings: [Sighting]) -> [String] {
            var events: [BeaconEvent] = []
            for sighting in sightings { engine.receive(sighting, into: &events) }
            engine.advance(to: sightings.last?.time ?? 0, into: &events)
            // Exits found in one sweep come in the engine's record order, which a restore does
            // not keep: compare in time order.
            return engine.takeActivity().presence.sorted { ($0.time, $0.identity) < ($1.time, $1.identity) }
                .map { "\($0.transition) \($0.identity.minor) \($0.time)" }
        }
        func batch() -> [Sighting] {
            (0..<40).map { _ in
                time += 0.25
                return Fixture.sighting(Fixture.identity(1, UInt16(random.next() % 80)), time: time, rssi: Int8(-50 - Int(random.next() % 30)))
            }
        }
        for _ in 0..<30 {
            _ = feed(&live, batch())
            let changes = live.takeChanges()
            for identity in changes.forgotten { rows[identity] = nil }
            for beacon in changes.changed { rows[beacon.identity] = beacon }
        }
        events.removeAll()
        var restored = try BeaconEngine(restoring: live.checkpointHeader.adding(Array(rows.values)))
        restored.followsEveryBeacon = true
        restored.retention = live.retention
        #expect(restored.checkpoint.beaconCount == live.checkpoint.beaconCount)
        #expect(Set(restored.checkpoint.beacons) == Set(live.checkpoint.beacons))
        for _ in 0..<10 {
            let next = batch()
            #expect(feed(&restored, next) == feed(&live, next))
        }
    }

    /// A time past 2^53 s, where adding a one-second cycle no longer changes a Double, made the
    /// cycle loop spin for ever (issue 9, item 11: `"time": 1e16`).
    @Test func aHugeTimeDoesNotHangTheEngine() {
        var engine = BeaconEngine()
        engine.startRanging(Fixture.region())
        var events: [BeaconEvent] = []
        engine.receive(Fixture.sighting(Fixture.identity(), time: 1_700_000_000), into: &events)
        engine.receive(Fixture.sighting(Fixture.identity(), time: 1e16), into: &events)
        engine.advance(to: 1e16 + 4, into: &events)
        #expect(events.count < 100)
        #expect(engine.now == 1e16 + 4)
    }
}
