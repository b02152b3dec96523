import BeaconKit
import Foundation

/// A walkable route: the points to walk through, start and end included, and its length.
public struct Route: Sendable, Hashable, Codable {
    public var waypoints: [Position]
    /// Names of the doors passed, in order.
    public var doors: [String]
    public var length: Double
}

/// Shortest walkable routes on a map. Walking is in straight lines that cross no wall; where
/// the map has rooms, a straight leg stays within one room (or within the space outside every
/// room, such as a corridor) and changes room only at a door. Dijkstra over the start, the
/// doors and the goal.
public struct Router: Sendable, Hashable {
    public let map: SiteMap

    public init(map: SiteMap) { self.map = map }

    public enum Destination: Sendable, Hashable {
        case point(Position)
        case room(String)
        case pointOfInterest(String)
    }

    /// The route, or nil when no walkable route exists (or the destination is unknown).
    public func route(from start: Position, to destination: Destination) -> Route? {
        let goal: Position
        switch destination {
        case .point(let point): goal = point
        case .room(let name):
            guard let room = map.room(named: name) else { return nil }
            if room.outline.contains(start) { return Route(waypoints: [start], doors: [], length: 0) }
            goal = room.outline.contains(room.outline.centroid) ? room.outline.centroid : room.outline.vertices[0]
        case .pointOfInterest(let name):
            guard let place = map.pointsOfInterest.first(where: { $0.name == name }) else { return nil }
            goal = place.position
        }
        // Nodes: 0 = start, 1 = goal, 2… = doors.
        let nodes = [start, goal] + map.doors.map(\.position)
        let roomsOfNode = nodes.map(roomsAt)
        var distance = [Double](repeating: .infinity, count: nodes.count)
        var previous = [Int](repeating: -1, count: nodes.count)
        var done = [Bool](repeating: false, count: nodes.count)
        distance[0] = 0
        while true {
            var current = -1
            for index in nodes.indices where !done[index] && distance[index].isFinite {
                if current < 0 || distance[index] < distance[current] { current = index }
            }
            guard current >= 0 else { break }
            if current == 1 { break }
            done[current] = true
            for next in nodes.indices where !done[next] && next != current {
                guard walkable(nodes[current], roomsOfNode[current], nodes[next], roomsOfNode[next]) else { continue }
                let candidate = distance[current] + nodes[current].distance(to: nodes[next])
                if candidate < distance[next] {
                    distance[next] = candidate
                    previous[next] = current
                }
            }
        }
        guard distance[1].isFinite else { return nil }
        var path: [Int] = []
        var node = 1
        while node >= 0 {
            path.append(node)
            node = previous[node]
        }
        path.reverse()
        return Route(waypoints: path.map { nodes[$0] }, doors: path.filter { $0 >= 2 }.map { map.doors[$0 - 2].name },
                     length: distance[1])
    }

    /// Indices of the rooms a point belongs to (a door on a shared edge belongs to both);
    /// empty outside every room.
    private func roomsAt(_ point: Position) -> Set<Int> {
        Set(map.rooms.indices.filter { map.rooms[$0].outline.contains(point, tolerance: 0.3) })
    }

    private func walkable(_ a: Position, _ roomsA: Set<Int>, _ b: Position, _ roomsB: Set<Int>) -> Bool {
        if !map.rooms.isEmpty {
            let shareRoom = !roomsA.isDisjoint(with: roomsB) || (roomsA.isEmpty && roomsB.isEmpty)
            // A door (in a room and possibly on the edge to the outside) may also join the
            // corridor outside every room.
            let viaOutside = (roomsA.isEmpty || roomsB.isEmpty) && !crossesRoomInterior(a, b)
            guard shareRoom || viaOutside else { return false }
        }
        let leg = Segment(from: a, to: b)
        return !map.walls.contains { $0.segment.crosses(leg) }
    }

    /// True when some point along the leg lies well inside a room: a leg outside every room must not
    /// cut through one.
    private func crossesRoomInterior(_ a: Position, _ b: Position) -> Bool {
        let samples = 8
        for step in 1..<samples {
            let t = Double(step) / Double(samples)
            let point = Position(x: a.x + t * (b.x - a.x), y: a.y + t * (b.y - a.y))
            if map.rooms.contains(where: { room in room.outline.contains(point) && room.outline.edges.allSatisfy { $0.distance(to: point) > 0.3 } }) {
                return true
            }
        }
        return false
    }
}
