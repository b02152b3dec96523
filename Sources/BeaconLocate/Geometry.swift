import BeaconKit

/// A straight segment between two points: a wall, or one step of a route or of a particle.
public struct Segment: Sendable, Hashable {
    public var from: Position
    public var to: Position

    public init(from: Position, to: Position) {
        self.from = from
        self.to = to
    }

    /// True when the two segments cross at a point inside both. Touching at an end point does
    /// not count, so a route may pass through a door placed at the end of a wall.
    public func crosses(_ other: Segment) -> Bool {
        let d1 = Self.orientation(other.from, other.to, from)
        let d2 = Self.orientation(other.from, other.to, to)
        let d3 = Self.orientation(from, to, other.from)
        let d4 = Self.orientation(from, to, other.to)
        return d1 * d2 < 0 && d3 * d4 < 0
    }

    private static func orientation(_ a: Position, _ b: Position, _ c: Position) -> Double {
        let value = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
        // Below a square millimetre the sign is rounding noise: treat it as collinear.
        return abs(value) < 1e-6 ? 0 : value
    }

    /// The shortest distance from a point to this segment.
    public func distance(to point: Position) -> Double {
        let dx = to.x - from.x, dy = to.y - from.y
        let lengthSquared = dx * dx + dy * dy
        guard lengthSquared > 0 else { return from.distance(to: point) }
        let t = min(1, max(0, ((point.x - from.x) * dx + (point.y - from.y) * dy) / lengthSquared))
        return Position(x: from.x + t * dx, y: from.y + t * dy).distance(to: point)
    }
}

/// A simple polygon (a room's outline), vertices in order, closed implicitly.
public struct Polygon: Sendable, Hashable {
    public var vertices: [Position]

    public init(_ vertices: [Position]) { self.vertices = vertices }

    /// Even–odd rule; a point within `tolerance` metres of an edge counts as inside, so a door
    /// on the boundary belongs to both rooms it joins.
    public func contains(_ point: Position, tolerance: Double = 0) -> Bool {
        if tolerance > 0 && edges.contains(where: { $0.distance(to: point) <= tolerance }) { return true }
        var inside = false
        var previous = vertices[vertices.count - 1]
        for vertex in vertices {
            if (vertex.y > point.y) != (previous.y > point.y) {
                let crossingX = (previous.x - vertex.x) * (point.y - vertex.y) / (previous.y - vertex.y) + vertex.x
                if point.x < crossingX { inside.toggle() }
            }
            previous = vertex
        }
        return inside
    }

    public var edges: [Segment] {
        vertices.indices.map { Segment(from: vertices[$0], to: vertices[($0 + 1) % vertices.count]) }
    }

    /// The area-weighted centre (a room's label point for routes); the vertex mean for a
    /// degenerate outline.
    public var centroid: Position {
        var area = 0.0, cx = 0.0, cy = 0.0
        for edge in edges {
            let cross = edge.from.x * edge.to.y - edge.to.x * edge.from.y
            area += cross
            cx += (edge.from.x + edge.to.x) * cross
            cy += (edge.from.y + edge.to.y) * cross
        }
        guard abs(area) > 1e-9 else {
            let count = Double(vertices.count)
            return Position(x: vertices.map(\.x).reduce(0, +) / count, y: vertices.map(\.y).reduce(0, +) / count)
        }
        return Position(x: cx / (3 * area), y: cy / (3 * area))
    }
}
