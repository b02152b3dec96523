import BeaconKit
@testable import BeaconLocate
@testable import BeaconServer
import Foundation
import Testing

/// The per-site tracker on its own: bounded in subjects and in per-cycle work.
@Suite("Site tracker")
struct SiteTrackerTests {
    static func carried(_ index: Int) -> BeaconIdentity {
        BeaconIdentity(uuid: PositionTests.uuid, major: UInt16(1 + index / 60_000), minor: UInt16(index % 60_000))
    }

    static func packets(_ identity: BeaconIdentity, at time: Double, near gateway: String) -> [Sighting] {
        PositionTests.fixedGateways.map { name in
            PositionTests.sighting(time, name, identity, rssi: name == gateway ? -60 : -85)
        }
    }

    /// The same floor with every receiver placed (no room-only scanner): there the room decider,
    /// not room presence, decides carried beacons' rooms.
    static let placedMap: SiteMap = {
        var map = PositionTests.map
        map.receivers.removeAll { $0.position == nil }
        return map
    }()

    /// Both ways of deciding carried beacons' rooms: room presence (a map with a room-only
    /// scanner) and the room decider (every receiver placed).
    static let maps = [PositionTests.map, placedMap]

    @Test(arguments: maps)
    func keepsAtMostTheCapEvictingTheStalest(map: SiteMap) {
        var tracker = SiteTracker(map: map, configuration: .init(maximumSubjects: 100))
        var exits = 0
        for index in 0..<1_000 {
            let time = 100 + Double(index) * 0.01
            for gateway in PositionTests.fixedGateways {
                let changes = tracker.receive(Self.packets(Self.carried(index), at: time, near: "pi-west").filter { $0.receiver == gateway },
                                              gateway: gateway)
                exits += changes.filter { $0.kind == .exit }.count
            }
        }
        #expect(tracker.subjectCount <= 100)
        #expect(tracker.evictedSubjects >= 900)
        #expect(tracker.position(of: TrackedSubject.beacon(Self.carried(999)).name) != nil)
        #expect(tracker.position(of: TrackedSubject.beacon(Self.carried(0)).name) == nil)
        // Subjects evicted while in a room leave it on the feed, never stay present.
        #expect(exits > 0)
    }

    @Test(arguments: maps)
    func silentSubjectsLeaveThePerCycleWork(map: SiteMap) {
        var tracker = SiteTracker(map: map)
        // 2,000 carried beacons heard for two seconds, then one beacon for a minute.
        for second in 0..<2 {
            for index in 0..<2_000 {
                let time = 100 + Double(second) + Double(index) / 2_000
                for gateway in PositionTests.fixedGateways {
                    _ = tracker.receive(Self.packets(Self.carried(index), at: time, near: "pi-east").filter { $0.receiver == gateway }, gateway: gateway)
                }
            }
        }
        #expect(tracker.backlog >= 2_000)
        var exits = 0
        for step in 0..<600 {
            let time = 102 + Double(step) * 0.1
            exits += tracker.receive(Self.packets(Self.carried(5_000), at: time, near: "pi-west").filter { $0.receiver == "pi-west" }, gateway: "pi-west")
                .filter { $0.kind == .exit }.count
        }
        // Each of the 2,000 left its room after the silence, and then no longer costs a cycle anything.
        #expect(exits == 2_000)
        #expect(tracker.backlog < 20)
        #expect(tracker.subjectCount == 2_001)
        #expect(tracker.positions.filter { $0.room != nil }.map(\.subject) == [TrackedSubject.beacon(Self.carried(5_000)).name])
    }

    /// One second of packets (five per gateway) of the fixed beacons and of `tag` at `position`,
    /// through the walls, each gateway's batch fed as it posts it.
    static func second(_ start: Double, tag: BeaconIdentity, at position: Position?, into tracker: inout SiteTracker) -> [SubjectRoomChange] {
        var changes: [SubjectRoomChange] = []
        for gateway in PositionTests.fixedGateways {
            let receiver = PositionTests.position(of: gateway)
            var batch: [Sighting] = []
            for step in 0..<5 {
                let time = start + Double(step) * 0.2
                for beacon in PositionTests.map.beacons {
                    batch.append(PositionTests.sighting(time, gateway, beacon.identity!, rssi: PositionTests.rssi(from: beacon.position, to: receiver)))
                }
                if let position { batch.append(PositionTests.sighting(time, gateway, tag, rssi: PositionTests.rssi(from: position, to: receiver))) }
            }
            changes += tracker.receive(batch, gateway: gateway)
        }
        return changes
    }

    @Test func theRoomDeciderFollowsACarriedBeaconThroughTheDoorOnceAndKeepsItsBeliefAcrossRefits() {
        var tracker = SiteTracker(map: Self.placedMap)
        let tag = Self.carried(7)
        var changes: [SubjectRoomChange] = []
        // West for 40 s, east for 40 s (a refit every 30 s rebuilds the decider), then silent.
        for second in 0..<100 {
            let time = 100 + Double(second)
            let position: Position? = time < 140 ? Position(x: 4, y: 4) : time < 180 ? Position(x: 16, y: 6) : nil
            changes += Self.second(time, tag: tag, at: position, into: &tracker)
        }
        #expect(tracker.calibratedAt != nil)
        #expect(changes.map { "\($0.kind) \($0.room)" } == ["enter west", "exit west", "enter east", "exit east"])
        let times = changes.map(\.time)
        // The belief crosses 0.93 within a few one-second cycles of the move; the exit follows
        // the decider's 6 s absence, swept once a cycle.
        #expect(times.count == 4 && times[2] > 140 && times[2] <= 143 && times[3] > 186 && times[3] <= 189, "\(times)")
        #expect(tracker.position(of: TrackedSubject.beacon(tag).name)?.room == nil)
    }

    /// Where the room decider runs, its trilateration (the map's walls modelled) is the
    /// subject's position; a map where room presence decides locates without walls. Two of the
    /// four gateways hear the tag through a 6 dB wall.
    @Test func theRoomDecidersFixIsThePositionAndModelsTheWalls() throws {
        let spot = Position(x: 16, y: 8)
        var errors: [Double] = []
        for map in Self.maps {
            var tracker = SiteTracker(map: map)
            for second in 0..<40 { _ = Self.second(100 + Double(second), tag: Self.carried(3), at: spot, into: &tracker) }
            let position = try #require(tracker.position(of: TrackedSubject.beacon(Self.carried(3)).name))
            #expect(position.method == LocateMethod.trilateration.rawValue)
            errors.append(Position(x: try #require(position.x), y: try #require(position.y)).distance(to: spot))
        }
        #expect(errors[1] < 1, "\(errors)")
        #expect(errors[1] < errors[0] / 2, "\(errors)")
    }

    /// A map's tag survey gives carried beacons fingerprints: the survey tag advertised
    /// −65 dBm and the tracked one −59, and the tracker shifts the survey to the tag's power as
    /// it shifts the tag's own readings. A survey that claims −59 for readings taken at −65
    /// says "farther from every gateway" everywhere, and its fix is worse.
    @Test func aTagSurveyLocatesCarriedBeaconsByFingerprintAtTheSurveyTagsPower() throws {
        let spot = Position(x: 16, y: 8)
        func surveyed(claimedPower: Double) -> SiteMap {
            var map = Self.placedMap
            for x in stride(from: 1.0, through: 19, by: 1) {
                for y in stride(from: 1.0, through: 9, by: 1) {
                    let point = Position(x: x, y: y)
                    let readings = map.receivers.indices.compactMap { index -> Reading? in
                        guard let gateway = map.receivers[index].position else { return nil }
                        return Reading(beacon: index, rssi: Double(PositionTests.rssi(from: point, to: gateway, power: -65)))
                    }
                    map.tagSurvey.append(TagSurveyPoint(position: point, measuredPower: claimedPower, readings: readings))
                }
            }
            return map
        }
        var errors: [Double] = []
        for claimed in [-65.0, -59.0] {
            var tracker = SiteTracker(map: surveyed(claimedPower: claimed))
            for second in 0..<40 { _ = Self.second(100 + Double(second), tag: Self.carried(5), at: spot, into: &tracker) }
            let position = try #require(tracker.position(of: TrackedSubject.beacon(Self.carried(5)).name))
            #expect(position.method == LocateMethod.fingerprint.rawValue)
            errors.append(Position(x: try #require(position.x), y: try #require(position.y)).distance(to: spot))
        }
        #expect(errors[0] < 0.75, "\(errors)")
        #expect(errors[1] > errors[0] + 0.5, "\(errors)")
    }

    /// One second of a phone at `position` hearing the map's fixed beacons (five packets each,
    /// through the walls), after the fixed gateways' second that calibrates the site.
    static func phoneSecond(_ start: Double, phone: String, at position: Position, into tracker: inout SiteTracker) -> [SubjectRoomChange] {
        let changes = second(start, tag: carried(0), at: nil, into: &tracker)
        var batch: [Sighting] = []
        for step in 0..<5 {
            for beacon in PositionTests.map.beacons {
                batch.append(PositionTests.sighting(start + Double(step) * 0.2, phone, beacon.identity!,
                                                    rssi: PositionTests.rssi(from: beacon.position, to: position)))
            }
        }
        return changes + tracker.receive(batch, gateway: phone)
    }

    /// `proxima serve --phone-room-particles`: each phone keeps its own particle filter. It
    /// walks west, through the door, east; its particle fix is its position, and each refit of
    /// the calibration (every 30 s) reanchors the phone's cloud instead of dropping it.
    @Test func aPhoneWithParticlesKeepsItsOwnCloudAcrossRefits() throws {
        var tracker = SiteTracker(map: Self.placedMap, configuration: .init(phoneRooms: .serverPhones(particles: 200)))
        var changes: [SubjectRoomChange] = []
        var models: Set<PathLossModel> = []
        for second in 0..<90 {
            let time = 100 + Double(second)
            // Half a metre a second along y = 5 from x = 3 to x = 17, then standing.
            let x = min(17, 3 + max(0, time - 130) * 0.5)
            changes += Self.phoneSecond(time, phone: "phone-anna", at: Position(x: x, y: 5), into: &tracker)
            // A cycle is located when the next one opens.
            guard second > 0 else { continue }
            let particles = try #require(tracker.subjects[.phone("phone-anna")]?.particles, "the phone has no particle filter at \(time)")
            models.insert(particles.anchors.model)
            #expect(particles.configuration.particles == 200)
        }
        // At least two calibrations were in force in turn, and the kept cloud took each.
        #expect(tracker.calibratedAt != nil)
        #expect(models.count >= 2, "\(models.count) models")
        #expect(tracker.subjects[.phone("phone-anna")]?.particles?.anchors.model == tracker.model)
        #expect(changes.filter { $0.subject == .phone("phone-anna") }.map { "\($0.kind) \($0.room)" } == ["enter west", "exit west", "enter east"])
        let position = try #require(tracker.position(of: "phone-anna"))
        #expect(position.method == LocateMethod.particle.rawValue && position.room == "east")
        #expect(Position(x: try #require(position.x), y: try #require(position.y)).distance(to: Position(x: 17, y: 5)) < 2.5, "\(position)")
    }

    /// Without the option a phone keeps no particles: the default costs no memory per subject.
    @Test func aPhoneWithoutParticlesKeepsNone() throws {
        var tracker = SiteTracker(map: Self.placedMap)
        for second in 0..<5 { _ = Self.phoneSecond(100 + Double(second), phone: "phone-anna", at: Position(x: 4, y: 5), into: &tracker) }
        let subject = try #require(tracker.subjects[.phone("phone-anna")])
        #expect(subject.particles == nil)
        #expect(tracker.position(of: "phone-anna")?.method == LocateMethod.trilateration.rawValue)
    }

    @Test func sightingsOutOfOrderAcrossGatewaysAreCountedAndUnusableTimesSkipped() {
        var tracker = SiteTracker(map: PositionTests.map)
        let tag = Self.carried(1)
        _ = tracker.receive([PositionTests.sighting(200, "pi-east", tag, rssi: -60)], gateway: "pi-east")
        _ = tracker.receive([PositionTests.sighting(150, "pi-west", tag, rssi: -80), PositionTests.sighting(.nan, "pi-west", tag, rssi: -80), PositionTests.sighting(1e300, "pi-west", tag, rssi: -80),
                             PositionTests.sighting(-.infinity, "pi-west", tag, rssi: -80)],
                            gateway: "pi-west")
        let changes = tracker.receive([PositionTests.sighting(201.5, "pi-east", tag, rssi: -60)], gateway: "pi-east")
        #expect(changes.map(\.room) == ["east"])
        #expect(tracker.position(of: TrackedSubject.beacon(tag).name)?.lastHeard == 201.5)
    }
}
