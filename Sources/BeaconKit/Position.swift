import Foundation

/// A point on a site's floor plan, in metres from the plan's origin: the one 2-D point every
/// module uses (maps, positions, fleet and registry placements).
public struct Position: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// `X,Y` in metres, as commands take a point; nil unless two finite numbers.
    public init?(commaSeparated text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let x = Double(parts[0].trimmingCharacters(in: .whitespaces)),
              let y = Double(parts[1].trimmingCharacters(in: .whitespaces)), x.isFinite, y.isFinite else { return nil }
        self.init(x: x, y: y)
    }

    public func distance(to other: Position) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}

/// A point in a venue, in metres, with `z` the height above the floor: the one 3-D point (the
/// simulator's transmitters and receivers, the security checks' placements).
public struct Position3D: Sendable, Hashable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(x: Double, y: Double, z: Double = 0) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// The point at `height` above a plan position.
    public init(_ position: Position, z: Double = 0) {
        self.init(x: position.x, y: position.y, z: z)
    }

    /// Where it is on the floor plan.
    public var plan: Position { Position(x: x, y: y) }

    public func distance(to other: Position3D) -> Double {
        let dx = x - other.x, dy = y - other.y, dz = z - other.z
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    enum CodingKeys: String, CodingKey { case x, y, z }

    /// `{"x", "y", "z"}`, with `z` 0 when absent (a point on the floor).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(x: try container.decode(Double.self, forKey: .x), y: try container.decode(Double.self, forKey: .y),
                  z: try container.decodeIfPresent(Double.self, forKey: .z) ?? 0)
    }

    /// To a tenth of a metre; the height only when off the floor, as alerts and logs name a spot.
    public var description: String {
        func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }
        return z == 0 ? "(\(tenths(x)), \(tenths(y)))" : "(\(tenths(x)), \(tenths(y)), \(tenths(z)))"
    }
}
