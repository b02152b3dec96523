import BeaconKit
import Foundation
import Testing
@testable import BeaconLocate

/// A room decider rebuilt with a new calibration may take the wall table of the one it
/// replaces (a server refits every 30 s; tabulating a large floor's walls takes most of a
/// second): it must decide exactly as one built from scratch, and a table from another map or
/// other anchors must not be taken.
@Suite struct WallLossReuseTests {
    let map = FixtureFiles.twoRooms

    @Test func aDeciderRebuiltWithTheOldWallTableDecidesAsANewOne() {
        let first = RoomDecider(map: map, model: PathLossModel(), configuration: .tags)
        let refit = PathLossModel(exponent: 2.4)
        var rebuilt = RoomDecider(map: map, model: refit, configuration: .tags, wallLosses: first.wallLosses)
        var fresh = RoomDecider(map: map, model: refit, configuration: .tags)
        #expect(rebuilt.wallLosses != nil)
        #expect(rebuilt.wallLosses == fresh.wallLosses)
        let anchors = AnchorSet(map: map, model: refit, attenuatingWalls: true)
        var rebuiltEvents: [RoomEvent] = [], freshEvents: [RoomEvent] = []
        for step in 0..<40 {
            // West to east through the door, a metre every two seconds.
            let spot = Position(x: 3 + Double(step) * 0.35, y: 5)
            let readings = FixtureFiles.readings(at: spot, anchors: anchors, offsets: [step % 8: Double(step % 3) * 2 - 2])
            let time = Double(step) * 0.5
            rebuiltEvents += rebuilt.observe(subject: "tag", readings: readings, receiver: "tag", time: time)
            freshEvents += fresh.observe(subject: "tag", readings: readings, receiver: "tag", time: time)
        }
        #expect(rebuiltEvents.map(\.room) == ["west", "west", "east"])
        #expect(rebuiltEvents == freshEvents)
    }

    @Test func aTableOfAnotherMapOrOtherAnchorsIsNotTaken() throws {
        var thickerWalls = map
        thickerWalls.walls = map.walls.map { MapWall(from: $0.segment.from, to: $0.segment.to, attenuation: 15) }
        let other = try #require(RoomDecider(map: thickerWalls, model: PathLossModel(), configuration: .tags).wallLosses)
        let own = RoomDecider(map: map, model: PathLossModel(), configuration: .tags, wallLosses: other)
        #expect(own.wallLosses != other)
        #expect(own.wallLosses == RoomDecider(map: map, model: PathLossModel(), configuration: .tags).wallLosses)

        var moved = map
        moved.beacons[0].position = Position(x: 2, y: 2)
        let movedTable = try #require(RoomDecider(map: moved, model: PathLossModel(), configuration: .tags).wallLosses)
        #expect(RoomDecider(map: map, model: PathLossModel(), configuration: .tags, wallLosses: movedTable).wallLosses != movedTable)
    }
}
