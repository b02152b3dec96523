import BeaconKit
import BeaconLocate
import Foundation
import Testing

/// `proxima locate` on sightings: carried beacons located from the gateways that hear them, and
/// rooms from the default room decider.
@Suite struct SightingLocatorTagTests {
    /// The two-room fixture with four positioned gateways in its corners and its beacons
    /// identified, so a beacon not on the map is a tag.
    static func site() throws -> SiteMap {
        var map = FixtureFiles.twoRooms
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        map.beacons = map.beacons.enumerated().map { index, beacon in
            var identified = beacon
            identified.identity = BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(index))
            return identified
        }
        map.receivers = [(1.0, 1.0), (1.0, 9.0), (19.0, 1.0), (19.0, 9.0)].enumerated().map {
            MappedReceiver(name: "gateway \($0.offset)", position: Position(x: $0.element.0, y: $0.element.1))
        }
        return map
    }

    @Test func aTagHeardByTheGatewaysIsLocatedAndGetsTheDecidersRooms() throws {
        let map = try Self.site()
        let model = PathLossModel(exponent: 2)
        let tag = IBeaconFrame(identity: BeaconIdentity(uuid: try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")), major: 9, minor: 9),
                               measuredPower: MeasuredPower(-65))
        var locator = SightingLocator(locator: ScanLocator(method: .trilateration, map: map, model: model), presence: RoomPresence(map: map))
        let outputs = try Self.walkWestToEast(tag, through: &locator, map: map, model: model)
        let subject = tag.identity.description
        var fixes: [(time: Double, fix: Fix, room: String?)] = []
        var events: [RoomEvent] = []
        for output in outputs {
            switch output {
            case .fix(let time, let receiver, let fix, let room):
                #expect(receiver == subject, "only the tag is located: the gateways hear no map beacon")
                fixes.append((time, fix, room))
            case .room(let event): events.append(event)
            }
        }
        #expect(fixes.count >= 18)
        // Located from the gateways: near the truth on both sides of the wall.
        let west = try #require(fixes.first { $0.time == 5 })
        let east = try #require(fixes.last)
        #expect(west.fix.position.distance(to: Position(x: 4, y: 5)) < 1.5, "\(west.fix)")
        #expect(east.fix.position.distance(to: Position(x: 16, y: 5)) < 1.5, "\(east.fix)")
        // Rooms come from the room decider alone (no room scanners on this map): one entry, one
        // move through the door, no event from the gateways' own rooms.
        #expect(events.allSatisfy { $0.subject == subject })
        #expect(events.map(\.kind) == [.enter, .exit, .enter])
        #expect(events.map(\.room) == ["west", "west", "east"])
        #expect(west.room == "west" && east.room == "east")
        // The decider moved within three cycles of the change at 10 s.
        let moved = try #require(events.last?.time)
        #expect(moved > 10 && moved <= 13, "\(events)")
    }

    /// The tag stands in the west room for 10 s, then in the east one for 10 s; every gateway
    /// hears it ten times a second at the model's level less the walls between.
    static func walkWestToEast(_ tag: IBeaconFrame, through locator: inout SightingLocator, map: SiteMap, model: PathLossModel) throws -> [LocateOutput] {
        var outputs: [LocateOutput] = []
        for tenth in 0..<200 {
            let time = Double(tenth) / 10
            let spot = time < 10 ? Position(x: 4, y: 5) : Position(x: 16, y: 5)
            for (index, gateway) in map.receivers.enumerated() {
                let position = try #require(gateway.position)
                let dx = spot.x - position.x, dy = spot.y - position.y
                // The tag advertises −65 dBm at 1 m, 6 dB below the model's default: the gateways
                // hear it that much weaker, and through the middle wall 6 dB weaker again.
                let rssi = model.expectedRSSI(power: -65, squaredDistance: dx * dx + dy * dy) - map.wallLoss(from: spot, to: position)
                outputs += locator.receive(Sighting(time: time, receiver: gateway.name, address: BluetoothAddress(rawValue: UInt64(100 + index)),
                                                    rssi: Int8(rssi.rounded()), frame: .iBeacon(tag)))
            }
        }
        return outputs + locator.finish()
    }

    /// A tag's room decider is fed every half second by default (its fixes stay once a second):
    /// its room events fall on half seconds, and it follows the move no later than when fed
    /// once a second.
    @Test func aTagsRoomsAreDecidedEveryHalfSecond() throws {
        let map = try Self.site()
        let model = PathLossModel(exponent: 2)
        let tag = IBeaconFrame(identity: BeaconIdentity(uuid: try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")), major: 9, minor: 9),
                               measuredPower: MeasuredPower(-65))
        func run(tagRoomCycle: Double) throws -> (fixTimes: [Double], events: [RoomEvent]) {
            var locator = SightingLocator(locator: ScanLocator(method: .trilateration, map: map, model: model), presence: RoomPresence(map: map),
                                          tagRoomCycle: tagRoomCycle)
            #expect(locator.tagRoomCycle == tagRoomCycle)
            var fixTimes: [Double] = [], events: [RoomEvent] = []
            for output in try Self.walkWestToEast(tag, through: &locator, map: map, model: model) {
                switch output {
                case .fix(let time, _, _, _): fixTimes.append(time)
                case .room(let event): events.append(event)
                }
            }
            return (fixTimes, events)
        }
        let half = try run(tagRoomCycle: 0.5), whole = try run(tagRoomCycle: 1)
        #expect(half.events.map(\.room) == ["west", "west", "east"] && whole.events.map(\.room) == ["west", "west", "east"])
        #expect(half.fixTimes == whole.fixTimes, "the printed fixes keep the one-second cycle")
        #expect(half.fixTimes.allSatisfy { $0 == $0.rounded() })
        #expect(whole.events.allSatisfy { $0.time == $0.time.rounded() })
        #expect(half.events.contains { $0.time != $0.time.rounded() }, "\(half.events)")
        let halfMove = try #require(half.events.last?.time), wholeMove = try #require(whole.events.last?.time)
        #expect(halfMove > 10 && halfMove <= wholeMove, "\(half.events) against \(whole.events)")
    }

    /// With a tag survey in the map, `--method fingerprint` locates tags by their fingerprints
    /// (without one, the particle filter does). The survey tag advertised −59 dBm and the
    /// walking one −65: both are shifted to the model's default power, so they match.
    @Test func aMapsTagSurveyGivesTagsFingerprints() throws {
        var map = try Self.site()
        let model = PathLossModel(exponent: 2)
        for x in stride(from: 1.0, through: 19, by: 1) {
            for y in stride(from: 1.0, through: 9, by: 1) {
                let spot = Position(x: x, y: y)
                let readings = try map.receivers.enumerated().map { index, gateway in
                    let position = try #require(gateway.position)
                    let dx = spot.x - position.x, dy = spot.y - position.y
                    return Reading(beacon: index, rssi: model.expectedRSSI(power: -59, squaredDistance: dx * dx + dy * dy) - map.wallLoss(from: spot, to: position))
                }
                map.tagSurvey.append(TagSurveyPoint(position: spot, measuredPower: -59, readings: readings))
            }
        }
        let tag = IBeaconFrame(identity: BeaconIdentity(uuid: try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")), major: 9, minor: 9),
                               measuredPower: MeasuredPower(-65))
        var methods: [Set<LocateMethod>] = []
        for surveyed in [map, try Self.site()] {
            var locator = SightingLocator(locator: ScanLocator(method: .fingerprint, map: surveyed, model: model), presence: RoomPresence(map: surveyed))
            var fixes: [(time: Double, fix: Fix)] = []
            for output in try Self.walkWestToEast(tag, through: &locator, map: surveyed, model: model) {
                if case .fix(let time, _, let fix, _) = output { fixes.append((time, fix)) }
            }
            methods.append(Set(fixes.map(\.fix.method)))
            guard surveyed.tagSurvey.isEmpty == false else { continue }
            let west = try #require(fixes.first { $0.time == 5 }), east = try #require(fixes.last)
            #expect(west.fix.position.distance(to: Position(x: 4, y: 5)) < 1, "\(west.fix)")
            #expect(east.fix.position.distance(to: Position(x: 16, y: 5)) < 1, "\(east.fix)")
        }
        #expect(methods == [[.fingerprint], [.particle]])
    }

    @Test func withoutTheDeciderRoomsAreTheFixesOwn() throws {
        let map = try Self.site()
        var locator = SightingLocator(locator: ScanLocator(method: .trilateration, map: map, model: PathLossModel(exponent: 2)),
                                      presence: RoomPresence(map: map), roomDecider: false)
        let tag = IBeaconFrame(identity: try #require(map.beacons.first?.identity))
        // A map beacon heard by a receiver is that receiver locating itself (a phone), not a tag.
        var outputs: [LocateOutput] = []
        for tenth in 0..<30 {
            outputs += locator.receive(Sighting(time: Double(tenth) / 10, receiver: "phone", address: BluetoothAddress(rawValue: 1), rssi: -60,
                                                frame: .iBeacon(tag)))
        }
        let receivers = outputs.compactMap { output -> String? in if case .fix(_, let receiver, _, _) = output { receiver } else { nil } }
        #expect(!receivers.isEmpty && receivers.allSatisfy { $0 == "phone" })
    }
}
