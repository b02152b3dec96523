import BeaconKit
import Foundation

/// The map's wall loss between every anchor and every spot of the floor, tabulated on a grid so
/// that estimators can put walls into their RSSI model at the cost of one lookup: a particle
/// filter asks for it a thousand times per beacon per update.
///
/// Cells are at least 0.25 m; on large maps they grow so the table stays within
/// `maximumEntries` (a fix within a cell of a wall may then get the loss of its other side).
public struct WallLossGrid: Sendable, Hashable {
    public static let maximumEntries = 4_000_000
    public let cell: Double
    /// Anchors the table was made for, in order, and the map's walls and size.
    public let anchors: [Position]
    let walls: [MapWall]
    let width: Double, height: Double
    private let columns: Int
    private let rows: Int
    /// losses[anchor * rows * columns + row * columns + column], dB.
    private let losses: [Float]

    public init(map: SiteMap, anchors: [Position]) {
        let area = max(1, map.width * map.height)
        let cell = max(0.25, (area * Double(max(1, anchors.count)) / Double(Self.maximumEntries)).squareRoot())
        let columns = max(1, Int((map.width / cell).rounded(.up)))
        let rows = max(1, Int((map.height / cell).rounded(.up)))
        var losses = [Float](repeating: 0, count: anchors.count * rows * columns)
        if !map.walls.isEmpty {
            for (anchor, position) in anchors.enumerated() {
                for row in 0..<rows {
                    for column in 0..<columns {
                        let centre = Position(x: (Double(column) + 0.5) * cell, y: (Double(row) + 0.5) * cell)
                        losses[(anchor * rows + row) * columns + column] = Float(map.wallLoss(from: centre, to: position))
                    }
                }
            }
        }
        self.cell = cell
        self.anchors = anchors
        walls = map.walls
        width = map.width
        height = map.height
        self.columns = columns
        self.rows = rows
        self.losses = losses
    }

    /// Whether this table holds `map`'s walls for `anchors`.
    public func fits(_ map: SiteMap, anchors: [Position]) -> Bool {
        self.anchors == anchors && walls == map.walls && width == map.width && height == map.height
    }

    /// The loss in dB between the spot (x, y) and an anchor.
    @inline(__always)
    public func loss(_ x: Double, _ y: Double, anchor: Int) -> Double {
        let column = min(columns - 1, max(0, Int(x / cell)))
        let row = min(rows - 1, max(0, Int(y / cell)))
        return Double(losses[(anchor * rows + row) * columns + column])
    }
}
