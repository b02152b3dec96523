import BeaconKit
import BeaconLocate
@testable import BeaconSimulator
import Foundation
import Testing

/// Rooms, doors and carried beacons in scenarios, and the room truth.
@Suite struct RoomScenarioTests {
    static let twoRooms = """
        {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "duration": 60,
         "venue": {"width": 20, "height": 10, "walls": [{"from": {"x": 10, "y": 0}, "to": {"x": 10, "y": 4.5}, "attenuation": 6},
                                                        {"from": {"x": 10, "y": 5.5}, "to": {"x": 10, "y": 10}, "attenuation": 6}]},
         "rooms": [{"name": "west", "polygon": [{"x": 0, "y": 0}, {"x": 10, "y": 0}, {"x": 10, "y": 10}, {"x": 0, "y": 10}]},
                   {"name": "east", "polygon": [{"x": 10, "y": 0}, {"x": 20, "y": 0}, {"x": 20, "y": 10}, {"x": 10, "y": 10}]}],
         "doors": [{"name": "middle", "position": {"x": 10, "y": 5}}],
         "beacons": [{"name": "anchor", "major": 1, "minor": 1, "position": {"x": 2, "y": 2}},
                     {"name": "tag", "major": 2, "minor": 1, "path": {"waypoints": [{"x": 5, "y": 5}, {"x": 15, "y": 5}], "speed": 1}}],
         "receivers": [{"name": "gw west", "position": {"x": 5, "y": 9}}, {"name": "gw east", "position": {"x": 15, "y": 9}},
                       {"name": "phone", "path": {"waypoints": [{"x": 15, "y": 5}, {"x": 5, "y": 5}], "speed": 1}}]}
        """

    @Test func scenarioNamesRoomsDoorsAndCarriedBeacons() throws {
        let scenario = try Scenario.decode(Data(Self.twoRooms.utf8))
        #expect(scenario.rooms.map(\.name) == ["west", "east"])
        #expect(scenario.doors.map(\.name) == ["middle"])
        let tag = try #require(scenario.beacons.first { $0.name == "tag" })
        #expect(tag.path != nil && tag.position == Position3D(x: 5, y: 5))
        // The tag walks east at 1 m/s through the door; the phone walks west.
        #expect(scenario.position(of: tag, at: 3) == Position3D(x: 8, y: 5))
        #expect(scenario.trueRoom(of: tag, at: 3) == "west")
        #expect(scenario.trueRoom(of: tag, at: 7) == "east")
        let phone = try #require(scenario.receivers.first { $0.name == "phone" })
        #expect(scenario.trueRoom(of: phone, at: 3) == "east")
        #expect(scenario.trueRoom(of: phone, at: 7) == "west")
    }

    @Test func siteMapComesFromTheScenario() throws {
        let map = try Scenario.decode(Data(Self.twoRooms.utf8)).siteMap
        // Fixed beacons are anchors at their advertised power; carried ones and walkers are located, not mapped.
        #expect(map.beacons.map(\.id) == ["anchor"])
        #expect(map.beacons[0].measuredPower == -59)
        #expect(map.receivers.map(\.name) == ["gw west", "gw east"])
        #expect(map.room(ofReceiver: "gw east") == "east")
        #expect(map.walls.count == 2 && map.rooms.count == 2 && map.doors.count == 1)
    }

    @Test func groundTruthCarriesRoomsAndTheMovingBeacon() throws {
        var scenario = try Scenario.decode(Data(Self.twoRooms.utf8))
        scenario.duration = 12
        var simulation = Simulation(scenario: scenario)
        let tagSightings = simulation.run().filter { $0.truth.beacon == "tag" && $0.sighting.receiver == "gw east" }
        #expect(!tagSightings.isEmpty)
        var rooms: Set<String> = []
        for item in tagSightings {
            let truePosition = scenario.position(of: scenario.beacons[1], at: item.sighting.time)
            // A moving link's geometry is refreshed after 0.1 s or once either end could have moved
            // 5 % of the distance (the tag walks at 1 m/s), whichever is later.
            #expect(item.truth.beaconPosition.distance(to: truePosition) <= max(0.1, 0.05 * item.truth.distance) + 0.01)
            #expect(item.truth.receiverRoom == "east")
            if let room = item.truth.beaconRoom { rooms.insert(room) }
        }
        #expect(rooms == ["west", "east"])
    }

    @Test(arguments: [
        (#"{"name": "x", "polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}]}"#, "rooms[0].polygon", "at least 3 vertices"),
        (#"{"name": "", "polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 1, "y": 1}]}"#, "rooms[0].name", "a name of 1 to 200"),
        (#"{"name": "x", "polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 1, "y": 99}]}"#, "rooms[0].polygon[2].y", "a number"),
        (#"{"name": "x", "outline": []}"#, "rooms[0].outline", "one of the keys"),
    ])
    func badRoomsNameTheirField(room: String, path: String, expected: String) throws {
        let document = Self.twoRooms.replacingOccurrences(of: #""rooms": ["#, with: #""rooms": [\#(room), "#)
        #expect {
            _ = try Scenario.decode(Data(document.utf8))
        } throws: { error in
            guard let error = error as? ScenarioError else { return false }
            return error.path == path && error.expected.hasPrefix(expected)
        }
    }

    @Test func aBeaconHasAPositionOrAPathNotBoth() throws {
        let both = Self.twoRooms.replacingOccurrences(of: #""name": "tag", "major": 2, "minor": 1,"#,
                                                      with: #""name": "tag", "major": 2, "minor": 1, "position": {"x": 1, "y": 1},"#)
        #expect(throws: ScenarioError(path: "beacons[1].path", expected: "either \"position\" (a fixed beacon) or \"path\" (a carried one)", found: "both")) {
            _ = try Scenario.decode(Data(both.utf8))
        }
        let duplicate = Self.twoRooms.replacingOccurrences(of: #""name": "east""#, with: #""name": "west""#)
        #expect(throws: ScenarioError(path: "rooms[1].name", expected: "a name no other room uses", found: "\"west\" again")) {
            _ = try Scenario.decode(Data(duplicate.utf8))
        }
    }

    @Test func roomScoreMeasuresAccuracyAndLatency() {
        var truth = RoomTimeline(), decided = RoomTimeline()
        truth.set("west", at: 0); truth.set("east", at: 4.2); truth.set("west", at: 8.5)
        decided.set("west", at: 0.9); decided.set("east", at: 6); decided.set("west", at: 9)
        var score = RoomScore()
        score.add(truth: truth, decided: decided, duration: 10)
        // Seconds 1–10: only second 5 is wrong (the truth is east from 4.2, the decider from 6).
        #expect(score.seconds == 10)
        #expect(score.agreeing == 9)
        #expect(score.latencies.map { ($0 * 10).rounded() / 10 } == [1.8, 0.5])
        #expect(score.missed == 0 && score.decidedChanges == 2)
    }

    /// Ghost presence: from truly leaving a room until the decider stops naming it, counted at
    /// most until the subject comes back.
    @Test func roomScoreMeasuresGhostPresence() {
        var truth = RoomTimeline(), late = RoomTimeline(), stuck = RoomTimeline()
        truth.set("west", at: 0); truth.set("east", at: 4.2); truth.set("west", at: 8.5)
        late.set("west", at: 0.9); late.set("east", at: 6); late.set("west", at: 9)
        stuck.set("west", at: 0.9)
        var score = RoomScore()
        score.add(truth: truth, decided: late, duration: 10)
        #expect(score.ghosts.map { ($0 * 10).rounded() / 10 } == [1.8, 0.5])
        // Never leaving west: a ghost for the whole stay in east; east was never named, so no ghost there.
        var stuckScore = RoomScore()
        stuckScore.add(truth: truth, decided: stuck, duration: 10)
        #expect(stuckScore.ghosts.map { ($0 * 10).rounded() / 10 } == [4.3, 0])
    }
}
