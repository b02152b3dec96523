import BeaconKit
import BeaconLocate
import Foundation

// Rooms, doors and carried beacons: the parts of a scenario that make it a site map as well
// (docs/scenarios.md, "Rooms, doors and carried beacons").

extension Scenario {
    /// Where a beacon is at a time: its fixed position, or the point of its path.
    public func position(of beacon: SimulatedBeacon, at time: Double) -> Position3D {
        if let path = beacon.path { return path.state(at: time).position }
        return beacon.relocations.last { $0.at <= time }?.position ?? beacon.position
    }

    /// The room (by name) holding a floor point, with `SiteMap.room(at:)`'s rule: the first
    /// room listed whose outline holds it. Nil outside every room.
    public func room(at point: Position3D) -> String? {
        roomIndex(at: point).map { rooms[$0].name }
    }

    func roomIndex(at point: Position3D) -> Int? {
        let position = point.plan
        return rooms.firstIndex { $0.outline.contains(position) }
            ?? rooms.firstIndex { $0.outline.contains(position, tolerance: 0.01) }
    }

    /// The room a receiver is truly in at a time: the room holding its true position.
    public func trueRoom(of receiver: SimulatedReceiver, at time: Double) -> String? {
        room(at: state(of: receiver, at: time).position)
    }

    /// The room a beacon (a carried one moves) is truly in at a time.
    public func trueRoom(of beacon: SimulatedBeacon, at time: Double) -> String? {
        room(at: position(of: beacon, at: time))
    }

    /// The scenario as positioning sees the site: its venue, walls, rooms and doors, the fixed
    /// beacons as anchors (at their advertised measured power, which is all a site knows before
    /// calibrating) and the fixed receivers as gateways (in the room holding them). Carried
    /// beacons and walkers are what is located, so they are not on the map.
    public var siteMap: SiteMap {
        var names: Set<String> = []
        let anchors = beacons.filter { $0.path == nil && names.insert($0.name).inserted }.map { beacon in
            MappedBeacon(id: beacon.name, identity: beacon.identity, position: beacon.position.plan,
                         measuredPower: Double(beacon.measuredPower.dBm))
        }
        let gateways = receivers.compactMap { receiver -> MappedReceiver? in
            guard case .fixed(let point) = receiver.placement else { return nil }
            return MappedReceiver(name: receiver.name, position: point.plan, room: room(at: point))
        }
        return SiteMap(name: name, width: venue.width, height: venue.height,
                       walls: venue.walls.map { MapWall(from: Position(x: $0.from.x, y: $0.from.y), to: Position(x: $0.to.x, y: $0.to.y),
                                                        attenuation: $0.attenuation) },
                       rooms: rooms, doors: doors, beacons: anchors, receivers: gateways)
    }

    // MARK: - Loading

    static func roomsAndDoors(_ root: JSONCursor, bounds: (width: Double, height: Double)) throws(ScenarioError) -> ([Room], [Door]) {
        var rooms: [Room] = []
        let roomCursors = try root.child("rooms")?.elements() ?? []
        try checkCount(roomCursors.count, SiteMap.Limits.rooms, path: "rooms", what: "rooms")
        for cursor in roomCursors {
            let object = try cursor.object(allowing: ["name", "polygon"])
            let nameCursor = try object.required("name")
            let name = try nameCursor.string()
            guard !name.isEmpty, name.count <= 200, !name.contains(where: { $0.isNewline || $0 == "\0" }) else {
                throw ScenarioError(path: nameCursor.path, expected: "a name of 1 to 200 characters on one line", found: nameCursor.value.shortDescription)
            }
            if rooms.contains(where: { $0.name == name }) {
                throw ScenarioError(path: nameCursor.path, expected: "a name no other room uses", found: "\"\(name)\" again")
            }
            let vertexCursors = try object.required("polygon").elements()
            guard vertexCursors.count >= 3 else {
                throw ScenarioError(path: "\(cursor.path).polygon", expected: "at least 3 vertices", found: "\(vertexCursors.count)")
            }
            try checkCount(vertexCursors.count, SiteMap.Limits.verticesPerRoom, path: "\(cursor.path).polygon", what: "vertices")
            var vertices: [Position] = []
            for vertex in vertexCursors {
                let point = try point(vertex, within: bounds)
                vertices.append(point.plan)
            }
            rooms.append(Room(name: name, outline: Polygon(vertices)))
        }
        var doors: [Door] = []
        let doorCursors = try root.child("doors")?.elements() ?? []
        try checkCount(doorCursors.count, SiteMap.Limits.doors, path: "doors", what: "doors")
        for (index, cursor) in doorCursors.enumerated() {
            let object = try cursor.object(allowing: ["name", "position"])
            let point = try point(object.required("position"), within: bounds)
            doors.append(Door(name: try object.string("name") ?? "door \(index + 1)", position: point.plan))
        }
        return (rooms, doors)
    }

    /// A beacon has exactly one of `position` (fixed) or `path` (carried).
    static func beaconPlacement(_ object: JSONCursor, path: String,
                                bounds: (width: Double, height: Double)) throws(ScenarioError) -> (Position3D, WalkerPath?) {
        switch (object.child("position"), object.child("path")) {
        case (let position?, nil):
            return (try point(position, within: bounds), nil)
        case (nil, let pathCursor?):
            let walk = try walkerPath(pathCursor, bounds: bounds)
            return (walk.waypoints[0].point, walk)
        case (.some, .some):
            throw ScenarioError(path: "\(path).path", expected: "either \"position\" (a fixed beacon) or \"path\" (a carried one)", found: "both")
        case (nil, nil):
            throw ScenarioError(path: "\(path).position", expected: "a \"position\" (a fixed beacon) or a \"path\" (a carried one)", found: "neither")
        }
    }

    private static func checkCount(_ count: Int, _ maximum: Int, path: String, what: String) throws(ScenarioError) {
        guard count <= maximum else { throw ScenarioError(path: path, expected: "at most \(maximum) \(what)", found: "\(count)") }
    }
}
