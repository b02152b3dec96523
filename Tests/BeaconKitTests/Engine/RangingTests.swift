import Foundation
import Testing
@testable import BeaconKit

@Suite struct RangingTests {
    private func rangingEngine(_ configuration: EngineConfiguration = .init()) -> BeaconEngine {
        var engine = BeaconEngine(configuration: configuration)
        engine.startRanging(Fixture.region())
        return engine
    }

    @Test func cycleCarriesCoreLocationFields() throws {
        var engine = rangingEngine()
        var events: [BeaconEvent] = []
        let beacon = Fixture.identity(3, 4)
        // Cycles run from the first time seen: [100, 101), [101, 102), ...
        engine.receive(Fixture.sighting(beacon, time: 100.0, rssi: -60), into: &events)
        engine.receive(Fixture.sighting(beacon, time: 100.3, rssi: -70), into: &events)
        engine.receive(Fixture.sighting(beacon, time: 100.6, rssi: nil), into: &events)
        engine.advance(to: 101, into: &events)
        let ranged = try #require(events.last?.rangedBeacons)
        #expect(events.last?.time == 101)
        let first = try #require(ranged.first)
        #expect(ranged.count == 1)
        #expect(first.identity == beacon)
        #expect(first.rssi == -65)
        #expect(first.packetCount == 3)
        #expect(first.timestamp == 100.6)
        #expect(first.measuredPower == .appleDefault)
        #expect(first.accuracy > 0)
        #expect(first.proximity != .unknown)
    }

    @Test func silentBeaconStaysUnknownForTheTrackingAgeThenLeaves() throws {
        var engine = rangingEngine(.init(trackingAge: 3))
        var events: [BeaconEvent] = []
        engine.receive(Fixture.sighting(Fixture.identity(), time: 0.5, rssi: -60), into: &events)
        events.removeAll()
        for second in 1...8 { engine.advance(to: Double(second) + 0.5, into: &events) }
        let lists = events.compactMap(\.rangedBeacons)
        #expect(lists.count == 8)
        // Cycle ends 1.5, 2.5, 3.5 are within 3 s of the packet at 0.5.
        #expect(lists.map(\.count) == [1, 1, 1, 0, 0, 0, 0, 0])
        #expect(lists[0][0].proximity != .unknown)
        for list in lists[1...2] {
            #expect(list[0].proximity == .unknown)
            #expect(list[0].accuracy == -1)
            #expect(list[0].rssi == 0)
            #expect(list[0].packetCount == 0)
        }
    }

    @Test func sortedByAccuracyWithUnknownLast() throws {
        var engine = rangingEngine()
        var events: [BeaconEvent] = []
        let far = Fixture.identity(1, 1), near = Fixture.identity(1, 2)
        let unusable = Fixture.identity(1, 3), silent = Fixture.identity(1, 4)
        engine.receive(Fixture.sighting(silent, time: 0, rssi: -40), into: &events)
        engine.advance(to: 1, into: &events)
        engine.receive(Fixture.sighting(unusable, time: 1.1, rssi: -50, power: MeasuredPower(0)), into: &events)
        engine.receive(Fixture.sighting(far, time: 1.2, rssi: -80), into: &events)
        engine.receive(Fixture.sighting(near, time: 1.3, rssi: -55), into: &events)
        engine.advance(to: 2, into: &events)
        let ranged = try #require(events.last?.rangedBeacons)
        #expect(ranged.map(\.identity) == [near, far, unusable, silent])
        #expect(ranged[2].accuracy == -1 && ranged[2].proximity == .unknown && ranged[2].rssi == -50)
    }

    @Test func positiveMeasuredPowerGivesUnknown() {
        #expect(DistanceModel.default.distance(rssi: -60, measuredPower: MeasuredPower(116)) == nil)
        #expect(DistanceModel.altBeaconDefault.distance(rssi: -60, measuredPower: MeasuredPower(0)) == nil)
        #expect(DistanceModel.bleacon.distance(rssi: -60, measuredPower: MeasuredPower(3)) == nil)
    }

    @Test func onlyRangedRegionsBeaconsAreListed() throws {
        var engine = BeaconEngine()
        engine.startRanging(Fixture.region("one", major: 1))
        engine.startRanging(Fixture.region("two", major: 2))
        var events: [BeaconEvent] = []
        engine.receive(Fixture.sighting(Fixture.identity(1, 1), time: 0), into: &events)
        engine.receive(Fixture.sighting(Fixture.identity(2, 1), time: 0.1), into: &events)
        engine.receive(Fixture.sighting(Fixture.identity(3, 1), time: 0.2), into: &events)
        engine.advance(to: 1, into: &events)
        let byRegion = Dictionary(uniqueKeysWithValues: events.compactMap { event in
            event.rangedBeacons.map { (event.region.identifier, $0.map(\.identity.major)) }
        })
        #expect(byRegion == ["one": [1], "two": [2]])
        engine.stopRanging(identifier: "one")
        events.removeAll()
        engine.advance(to: 2, into: &events)
        #expect(events.map(\.region.identifier) == ["two"])
    }

    /// A receiver standing still at `metres`, 10 packets/s, σ = 4 dB Gaussian RSSI noise, one hour.
    /// Free-space log-distance, so that 0.5 m and 3 m are the zone boundaries themselves (the
    /// robust default pulls estimates toward 2.25 m, away from both boundaries).
    private func zoneChanges(atMetres metres: Double, seed: UInt64) -> (changes: Int, zones: Set<Proximity>) {
        var engine = rangingEngine(EngineConfiguration(distance: DistanceConfiguration(model: .freeSpace)))
        var random = EngineRandom(seed: seed)
        var events: [BeaconEvent] = []
        let mean = Fixture.rssi(atMetres: metres)
        var time = 0.0
        var reported: [Proximity] = []
        while time < 3600 {
            let noisy = (mean + random.gaussian(sigma: 4)).rounded()
            engine.receive(Fixture.sighting(Fixture.identity(), time: time, rssi: Int8(clamping: Int(noisy))), into: &events)
            for event in events { if let list = event.rangedBeacons, let beacon = list.first { reported.append(beacon.proximity) } }
            events.removeAll(keepingCapacity: true)
            time += 0.1
        }
        let changes = zip(reported, reported.dropFirst()).filter { $0 != $1 }.count
        return (changes, Set(reported))
    }

    @Test(arguments: [0.5, 3.0], Array(UInt64(11)...UInt64(20)))
    func proximityDoesNotToggleAtAZoneBoundary(metres: Double, seed: UInt64) {
        let (changes, zones) = zoneChanges(atMetres: metres, seed: seed)
        #expect(changes == 0, "\(changes) zone changes at \(metres) m: \(zones)")
        #expect(!zones.contains(.unknown))
    }

    @Test func withoutHysteresisTheSameRunToggles() {
        // The property the hysteresis buys: the classifier alone flips at the boundary.
        var tracker = ProximityTracker()
        let bare = ProximityZones(hysteresisRatio: 1, confirmationCycles: 1)
        var flips = 0, previous = Proximity.unknown
        var random = EngineRandom(seed: 5)
        var filter = RSSIFilterChannel()
        for step in 0..<36000 {
            let rssi = filter.add(rssi: Int8(clamping: Int((Fixture.rssi(atMetres: 0.5) + random.gaussian(sigma: 4)).rounded())),
                                  time: Double(step) / 10)
            guard step % 10 == 9 else { continue }
            let zone = tracker.update(distance: DistanceModel.freeSpace.distance(rssi: rssi, measuredPower: .appleDefault), zones: bare)
            if previous != .unknown && zone != previous { flips += 1 }
            previous = zone
        }
        #expect(flips > 10)
    }

    @Test func proximityMovesWhenTheBeaconReallyMoves() {
        var tracker = ProximityTracker()
        let zones = ProximityZones.default
        #expect(tracker.update(distance: 0.3, zones: zones) == .immediate)
        #expect(tracker.update(distance: 0.6, zones: zones) == .immediate)   // inside the margin
        for _ in 1..<zones.confirmationCycles {
            #expect(tracker.update(distance: 1.5, zones: zones) == .immediate)  // waiting for confirmation
        }
        #expect(tracker.update(distance: 1.5, zones: zones) == .near)
        #expect(tracker.update(distance: 3.8, zones: zones) == .near)        // inside the margin
        for _ in 1..<zones.confirmationCycles { #expect(tracker.update(distance: 8, zones: zones) == .near) }
        #expect(tracker.update(distance: 8, zones: zones) == .far)
        #expect(tracker.update(distance: nil, zones: zones) == .unknown)
        #expect(tracker.current == .far)
    }
}
