import BeaconKit
import BeaconLocate
import Foundation
import Testing

/// Rooms from fixes (no room receivers), and walls in the estimators' model.
@Suite struct FixRoomTests {
    let map = FixtureFiles.twoRooms

    @Test func aSingleStrayFixDoesNotMoveTheSubject() {
        var rooms = FixRoomPresence(rooms: map.rooms, configuration: .init(margin: 0.3, dwell: 1))
        #expect(rooms.observe(subject: "phone", at: Position(x: 3, y: 5), time: 0).map(\.kind) == [.enter])
        // One fix east, then back west: no change.
        #expect(rooms.observe(subject: "phone", at: Position(x: 14, y: 5), time: 1).isEmpty)
        #expect(rooms.observe(subject: "phone", at: Position(x: 4, y: 5), time: 2).isEmpty)
        // A fix just over the line (within the margin) does not count for the east room either.
        #expect(rooms.observe(subject: "phone", at: Position(x: 10.1, y: 5), time: 3).isEmpty)
        #expect(rooms.observe(subject: "phone", at: Position(x: 10.2, y: 5), time: 4).isEmpty)
        #expect(rooms.room(of: "phone") == "west")
        // Two fixes a second apart well inside the east room: it moves, at the second one.
        #expect(rooms.observe(subject: "phone", at: Position(x: 13, y: 5), time: 5).isEmpty)
        let moved = rooms.observe(subject: "phone", at: Position(x: 14, y: 5), time: 6)
        #expect(moved == [RoomEvent(subject: "phone", room: "west", kind: .exit, time: 6),
                          RoomEvent(subject: "phone", room: "east", kind: .enter, time: 6)])
    }

    @Test func noFixesMeansTheSubjectLeaves() {
        var rooms = FixRoomPresence(rooms: map.rooms)
        _ = rooms.observe(subject: "phone", at: Position(x: 3, y: 5), time: 0)
        #expect(rooms.advance(to: 5).isEmpty)
        #expect(rooms.advance(to: 7) == [RoomEvent(subject: "phone", room: "west", kind: .exit, time: 7)])
        #expect(rooms.room(of: "phone") == nil)
    }

    @Test func sightingLocatorGivesRoomsFromFixesWithoutRoomReceivers() throws {
        // No receivers on the map: the phone's own fixes decide its room.
        var plain = map
        plain.receivers = []
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        plain.beacons = plain.beacons.enumerated().map { index, beacon in
            var tagged = beacon
            tagged.identity = BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(index))
            return tagged
        }
        let anchors = AnchorSet(map: plain, model: PathLossModel(exponent: 2))
        var locator = SightingLocator(locator: ScanLocator(method: .trilateration, map: plain, model: PathLossModel(exponent: 2)),
                                      presence: RoomPresence(map: plain))
        var events: [RoomEvent] = []
        for tenth in 0..<100 {
            let time = Double(tenth) / 10
            let spot = time < 5 ? Position(x: 4, y: 5) : Position(x: 16, y: 5)
            for reading in FixtureFiles.readings(at: spot, anchors: anchors) {
                let sighting = Sighting(time: time, receiver: "phone", address: BluetoothAddress(rawValue: UInt64(reading.beacon + 1)),
                                        rssi: Int8(reading.rssi.rounded()),
                                        frame: .iBeacon(IBeaconFrame(identity: try #require(plain.beacons[reading.beacon].identity))))
                for output in locator.receive(sighting) { if case .room(let event) = output { events.append(event) } }
            }
        }
        #expect(events.map(\.kind) == [.enter, .exit, .enter])
        #expect(events.map(\.room) == ["west", "west", "east"])
    }

    @Test func wallsInTheModelUndoWallLoss() throws {
        // Readings behind the 6 dB wall are 6 dB weaker than free space says; with the map's
        // walls in its model, trilateration lands on the truth again.
        let model = PathLossModel(exponent: 2)
        let withWalls = AnchorSet(map: map, model: model, attenuatingWalls: true)
        let truth = Position(x: 6, y: 2.5)
        let readings = FixtureFiles.readings(at: truth, anchors: withWalls).map { reading in
            Reading(beacon: reading.beacon, rssi: reading.rssi - map.wallLoss(from: truth, to: map.beacons[reading.beacon].position))
        }
        let aware = try #require(RobustTrilateration(anchors: withWalls).locate(readings))
        let unaware = try #require(RobustTrilateration(anchors: AnchorSet(map: map, model: model)).locate(readings))
        #expect(aware.position.distance(to: truth) < 0.3)
        #expect(aware.position.distance(to: truth) < unaware.position.distance(to: truth))
    }
}
