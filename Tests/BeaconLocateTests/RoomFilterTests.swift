import BeaconKit
import BeaconLocate
import Testing

/// Three rooms in a row, A | B | C, with doors A–B and B–C only.
@Suite struct RoomFilterTests {
    static let rooms = ["A", "B", "C"].enumerated().map { index, name in
        let x = Double(index) * 5
        return Room(name: name, outline: Polygon([Position(x: x, y: 0), Position(x: x + 5, y: 0), Position(x: x + 5, y: 5), Position(x: x, y: 5)]))
    }
    static let doors = [Door(name: "A-B", position: Position(x: 5, y: 2.5)), Door(name: "B-C", position: Position(x: 10, y: 2.5))]
    static let likelihood = RoomLikelihood(rooms: rooms, spread: 0.5)

    func feed(_ filter: inout RoomFilter, _ positions: [Position], from start: Double = 0) -> [RoomEvent] {
        positions.enumerated().flatMap { index, position in
            filter.observe(subject: "s", likelihoods: Self.likelihood.likelihoods(of: position), time: start + Double(index))
        }
    }

    @Test func doorsJoinOnlyNeighbouringRooms() {
        let filter = RoomFilter(rooms: Self.rooms, doors: Self.doors)
        #expect(filter.doorNeighbours == [[1], [0, 2], [1]])
    }

    @Test func oneWildFixDoesNotMoveTheRoomButAStayDoes() {
        var filter = RoomFilter(rooms: Self.rooms, doors: Self.doors)
        let inA = Position(x: 2.5, y: 2.5), inC = Position(x: 12.5, y: 2.5), inB = Position(x: 7.5, y: 2.5)
        _ = feed(&filter, [inA, inA, inA])
        #expect(filter.room(of: "s") == "A")
        // C is two doors away: one fix there is an outlier, not a walk.
        #expect(feed(&filter, [inC], from: 3).isEmpty)
        #expect(filter.room(of: "s") == "A")
        _ = feed(&filter, [inA, inA], from: 4)
        let events = feed(&filter, [inB, inB], from: 6)
        #expect(events.map(\.kind) == [.exit, .enter])
        #expect(filter.room(of: "s") == "B")
        let belief = filter.belief(of: "s") ?? []
        #expect(belief.count == 3 && belief[1] > 0.93)
    }

    @Test func fixesAtAWallDoNotFlap() {
        var filter = RoomFilter(rooms: Self.rooms, doors: Self.doors)
        let nearWallInA = Position(x: 4.8, y: 2.5), nearWallInB = Position(x: 5.2, y: 2.5)
        _ = feed(&filter, [Position(x: 2.5, y: 2.5), Position(x: 2.5, y: 2.5)])
        let events = feed(&filter, (0..<20).map { $0 % 2 == 0 ? nearWallInB : nearWallInA }, from: 2)
        #expect(events.count <= 2, "\(events)")
    }

    @Test func silenceEndsThePresenceAndBadLikelihoodsAreIgnored() {
        var filter = RoomFilter(rooms: Self.rooms, doors: Self.doors)
        #expect(filter.observe(subject: "s", likelihoods: [1, .nan, 1], time: 0).isEmpty)
        #expect(filter.observe(subject: "s", likelihoods: [1, 1], time: 0).isEmpty)
        #expect(filter.observe(subject: "s", likelihoods: [0, 0, 0], time: 0).isEmpty)
        _ = feed(&filter, [Position(x: 2.5, y: 2.5)])
        #expect(filter.advance(to: 3).isEmpty)
        #expect(filter.advance(to: 10).map(\.kind) == [.exit])
        #expect(filter.room(of: "s") == nil)
    }

    /// The server keeps each subject's track itself: the same walk gives the same events and
    /// beliefs as the filter's own record, and only the silent track ends.
    @Test func aCallerKeptTrackDecidesAsTheFiltersOwnRecord() {
        var own = RoomFilter(rooms: Self.rooms, doors: Self.doors)
        let shared = RoomFilter(rooms: Self.rooms, doors: Self.doors)
        var track: RoomFilter.Track?
        var other: RoomFilter.Track?
        let walk = [2.5, 2.5, 4.5, 5.5, 7.5, 7.5, 9.8, 10.3, 12.5, 12.5, 12.5].map { Position(x: $0, y: 2.5) }
        var kept: [RoomEvent] = []
        for (index, position) in walk.enumerated() {
            let likelihoods = Self.likelihood.likelihoods(of: position)
            kept += shared.observe(&track, subject: "s", likelihoods: likelihoods, time: Double(index))
            _ = shared.observe(&other, subject: "t", likelihoods: Self.likelihood.likelihoods(of: Position(x: 2.5, y: 2.5)), time: 0)
        }
        #expect(kept == feed(&own, walk))
        #expect(kept.filter { $0.kind == .enter }.map(\.room) == ["A", "B", "C"])
        #expect(shared.room(of: track) == "C" && own.room(of: "s") == "C")
        #expect(shared.advance(&track, subject: "s", to: 12).isEmpty && track != nil)
        #expect(shared.advance(&track, subject: "s", to: 20) == [RoomEvent(subject: "s", room: "C", kind: .exit, time: 20)])
        #expect(track == nil && shared.room(of: track) == nil)
        #expect(shared.room(of: other) == "A")
    }

    @Test func hugeAndDegenerateRoomsStayBounded() {
        let huge = Room(name: "huge", outline: Polygon([Position(x: 0, y: 0), Position(x: 1e12, y: 0), Position(x: 1e12, y: 1e12), Position(x: 0, y: 1e12)]))
        let line = Room(name: "line", outline: Polygon([Position(x: 0, y: 0), Position(x: 1e15, y: 0), Position(x: 1e15, y: 0)]))
        let likelihood = RoomLikelihood(rooms: [huge, line] + Self.rooms)
        let values = likelihood.likelihoods(of: Position(x: 2.5, y: 2.5))
        #expect(values.count == 5 && values.allSatisfy { $0.isFinite && $0 > 0 })
        // Room A (index 2) holds the fix and is far smaller than "huge", so it is likelier.
        #expect(values[2] > values[0])
    }
}
