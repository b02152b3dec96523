import BeaconKit
import BeaconLocate
import Foundation
import Testing

@Suite struct RoomAndRouteTests {
    let rooms = ["pi-west": "west", "pi-east": "east"]

    /// `X,Y` as `proxima route --from` and `proxima survey record --at` take a point.
    @Test func aPointIsTwoFiniteNumbersSeparatedByAComma() {
        #expect(Position(commaSeparated: " 3.5, 12") == Position(x: 3.5, y: 12))
        #expect(Position(commaSeparated: "-1,0") == Position(x: -1, y: 0))
        for refused in ["1;1", "1,2,3", "nan,1", "1,inf", "", ",", "x,1"] {
            #expect(Position(commaSeparated: refused) == nil, "\(refused)")
        }
    }

    @Test func hysteresisStopsFlappingButFollowsARealMove() {
        var presence = RoomPresence(receiverRooms: rooms)
        var generator = SplitMix64(seed: 11)
        var events: [RoomEvent] = []
        // 60 s standing at the door, both receivers about equal and noisy: at most one entry.
        for tenth in 0..<600 {
            let time = Double(tenth) / 10
            events += presence.observe(subject: "tag", receiver: "pi-west", rssi: -70 + Double.random(in: -5...5, using: &generator), at: time)
            events += presence.observe(subject: "tag", receiver: "pi-east", rssi: -71 + Double.random(in: -5...5, using: &generator), at: time + 0.05)
        }
        #expect(events.count == 1 && events[0].kind == .enter)
        // Then a clear move east at t = 60.
        var moved: Double?
        for tenth in 600..<700 {
            let time = Double(tenth) / 10
            for event in presence.observe(subject: "tag", receiver: "pi-west", rssi: -85 + Double.random(in: -3...3, using: &generator), at: time)
                + presence.observe(subject: "tag", receiver: "pi-east", rssi: -60 + Double.random(in: -3...3, using: &generator), at: time + 0.05)
                where event.kind == .enter { moved = event.time }
        }
        #expect(presence.room(of: "tag") == "east")
        #expect(moved.map { $0 - 60 <= 3 } == true, "latency \(String(describing: moved))")
    }

    @Test func leavingEndsPresenceWithinTheAbsenceBound() {
        var presence = RoomPresence(receiverRooms: rooms)
        for tenth in 0..<100 { _ = presence.observe(subject: "tag", receiver: "pi-west", rssi: -60, at: Double(tenth) / 10) }
        var exit: RoomEvent?
        for second in 10...40 { exit = exit ?? presence.advance(to: Double(second)).first }
        #expect(exit?.kind == .exit && exit?.room == "west")
        #expect((exit?.time ?? 99) - 9.9 <= presence.configuration.absence.lowerBound + 1)
    }

    @Test func boundedSubjects() {
        var presence = RoomPresence(receiverRooms: rooms)
        _ = presence.observe(subject: "x", receiver: "unknown receiver", rssi: -50, at: 0)
        #expect(presence.room(of: "x") == nil)
        _ = presence.observe(subject: "x", receiver: "pi-west", rssi: .nan, at: 0)
        #expect(presence.room(of: "x") == nil)
    }

    /// The Raspberry Pi two-scanner run: beacons 2 and 3 sat in Room201 and beacon 4 on the
    /// Room202 scanner the whole time; beacon 1 moved. Each second is one cycle.
    @Test func raspberryPiTwoScannerRun() throws {
        struct Event: Decodable { var scannerID: String; var minor: Int; var rssi: Int; var time: Double }
        let text = String(decoding: try FixtureFiles.gunzipped("raspi/TwoScannersRun1-2015-03-03.json.gz"), as: UTF8.self)
        let events = try JSONDecoder().decode([Event].self, from: Data(("[" + text.replacingOccurrences(of: "}{", with: "},{") + "]").utf8))
            .sorted { $0.time < $1.time }
        #expect(events.count == 39_802)
        var presence = RoomPresence(receiverRooms: ["Room201": "Room201", "Room202": "Room202"])
        let truth = ["2": "Room201", "3": "Room201", "4": "Room202"]
        var correct: [String: Int] = [:], cycles: [String: Int] = [:]
        var changes: [RoomEvent] = []
        let start = events[0].time / 1000
        var nextCycle = start + 1
        for event in events {
            let time = event.time / 1000
            while time >= nextCycle {
                changes += presence.advance(to: nextCycle).filter { $0.subject == "1" }
                for (subject, room) in truth {
                    cycles[subject, default: 0] += 1
                    if presence.room(of: subject) == room { correct[subject, default: 0] += 1 }
                }
                nextCycle += 1
            }
            changes += presence.observe(subject: String(event.minor), receiver: event.scannerID, rssi: Double(event.rssi), at: time)
                .filter { $0.subject == "1" }
        }
        for subject in truth.keys.sorted() {
            let share = Double(correct[subject] ?? 0) / Double(cycles[subject] ?? 1)
            #expect(share >= 0.99, "beacon \(subject): \(share)")
            print("raspi: beacon \(subject) correct in \(correct[subject] ?? 0) of \(cycles[subject] ?? 0) cycles")
        }
        #expect(changes.contains { $0.room == "Room202" && $0.kind == .enter })
        for change in changes { print(String(format: "raspi: beacon 1 %@ %@ at +%.0f s", change.kind.rawValue, change.room, change.time - start)) }
    }

    @Test func routesGoThroughTheDoor() throws {
        let router = Router(map: FixtureFiles.twoRooms)
        let route = try #require(router.route(from: Position(x: 2, y: 2), to: .room("east")))
        #expect(route.doors == ["middle door"])
        #expect(route.waypoints.count == 3)
        let direct = Position(x: 2, y: 2).distance(to: Position(x: 15, y: 5))
        #expect(route.length >= direct)
        let car = try #require(router.route(from: Position(x: 2, y: 8), to: .pointOfInterest("car")))
        #expect(car.doors == ["middle door"])
        let same = try #require(router.route(from: Position(x: 2, y: 2), to: .point(Position(x: 8, y: 8))))
        #expect(same.doors.isEmpty && abs(same.length - Position(x: 2, y: 2).distance(to: Position(x: 8, y: 8))) < 1e-9)
        var closed = FixtureFiles.twoRooms
        closed.doors = []
        #expect(Router(map: closed).route(from: Position(x: 2, y: 2), to: .room("east")) == nil)
    }
}
