import Foundation

/// How likely each room makes one cycle's readings, straight from the signal model and with no
/// position fix: the readings' likelihood under the calibrated path-loss model with the map's
/// walls (the particle filter's Cauchy loss), averaged over the room's floor on a grid, as if
/// the subject stood anywhere in the room with equal chance. A fix is one point and can fall in
/// a wall or the wrong side of a door; this asks each room as a whole.
///
/// `temperature` (0…1] raises each room's likelihood to that power: readings averaged over a
/// second share their shadowing, so cycles are not independent evidence and a full power would
/// make one cycle decide too much.
///
/// `weakerLossScale` is the Cauchy scale of readings weaker than the model predicts, when it
/// differs from `lossScale` (one-sided loss): bodies and walls the map does not know only ever
/// take power off a signal, so a reading 10 dB under the model may be a body in the way, while
/// one 10 dB over it rarely has such an excuse. A wider scale below keeps a body-shadowed
/// beacon from voting its room away (docs/evaluation.md, "One-sided loss").
public struct SignalRoomLikelihood: Sendable {
    public let lossScale: Double
    public let weakerLossScale: Double
    public let temperature: Double
    public let outlierShare: Double
    private let anchorCount: Int
    /// expected[room][cell * anchorCount + anchor]: the model's RSSI at the cell, dBm.
    private let expected: [[Float]]

    /// The most model values tabulated (cells × anchors over all rooms): rooms get coarser
    /// grids on large maps, so memory and the cost of a cycle stay bounded.
    public static let maximumEntries = 2_000_000

    /// `anchors` should model the walls (``AnchorSet/init(map:model:attenuatingWalls:)`` with
    /// `attenuatingWalls`), or only distance counts. At most `maximumCells` cells per room, fewer
    /// when rooms × cells × anchors would pass ``maximumEntries``.
    public init(rooms: [Room], anchors: AnchorSet, lossScale: Double = 5, weakerLossScale: Double? = nil, temperature: Double = 0.5,
                outlierShare: Double = 0.01, cellSize: Double = 1, maximumCells: Int = 400) {
        self.lossScale = max(0.5, lossScale)
        self.weakerLossScale = Self.validScale(weakerLossScale, otherwise: self.lossScale)
        self.temperature = min(1, max(0.01, temperature))
        self.outlierShare = min(max(outlierShare, 0), 1)
        anchorCount = anchors.xs.count
        let model = anchors.model
        let cellsPerRoom = max(1, min(maximumCells, Self.maximumEntries / max(1, rooms.count * max(1, anchorCount))))
        expected = rooms.map { room in
            RoomGrid.cells(of: room.outline, cellSize: cellSize, maximumCells: cellsPerRoom).flatMap { cell in
                anchors.xs.indices.map { anchor in
                    let dx = cell.x - anchors.xs[anchor], dy = cell.y - anchors.ys[anchor]
                    return Float(model.expectedRSSI(power: anchors.powers[anchor], squaredDistance: dx * dx + dy * dy)
                        - anchors.wallLoss(cell.x, cell.y, anchor))
                }
            }
        }
    }

    /// Likelihood per room (rooms' order, largest 1 before the outlier share) of readings
    /// already corrected by the receiver's gain; nil without a reading of a known anchor.
    public func likelihoods(of readings: [Reading]) -> [Double]? {
        logLikelihoods(of: readings).map { Self.likelihoods(logs: $0, temperature: temperature, outlierShare: outlierShare) }
    }

    /// `exp(temperature × log)` plus the outlier share, per room: one cycle's log-likelihoods
    /// tempered, so several temperatures can share one pass over the grid.
    public static func likelihoods(logs: [Double], temperature: Double, outlierShare: Double) -> [Double] {
        logs.map { (1 - outlierShare) * exp(temperature * $0) + outlierShare }
    }

    /// A finite scale of at least 0.5 dB, or `otherwise`.
    static func validScale(_ scale: Double?, otherwise: Double) -> Double {
        guard let scale, scale.isFinite else { return otherwise }
        return max(0.5, scale)
    }

    /// The log-likelihood per room of the readings, untempered, the largest 0; readings weaker
    /// than the model are scored with `weakerLossScale` (this one's unless given).
    public func logLikelihoods(of readings: [Reading], weakerLossScale: Double? = nil) -> [Double]? {
        let usable = readings.filter { $0.beacon >= 0 && $0.beacon < anchorCount && $0.rssi.isFinite }
        guard !usable.isEmpty, !expected.isEmpty else { return nil }
        let inverseScale2 = 1 / (lossScale * lossScale)
        let below = Self.validScale(weakerLossScale, otherwise: self.weakerLossScale)
        let inverseWeakerScale2 = 1 / (below * below)
        let beacons = usable.map(\.beacon), rssis = usable.map(\.rssi)
        let stride = max(1, anchorCount)
        // Unsafe buffers: this loop runs cells × readings times per subject and cycle, and a
        // debug build (the test suite's) spends most of it in bounds checks otherwise.
        let logs = expected.map { table -> Double in
            let cells = table.count / stride
            guard cells > 0 else { return -Double.infinity }
            var values = [Double](repeating: 0, count: cells)
            table.withUnsafeBufferPointer { model in
                beacons.withUnsafeBufferPointer { beacons in
                    rssis.withUnsafeBufferPointer { rssis in
                        values.withUnsafeMutableBufferPointer { values in
                            for cell in 0..<cells {
                                var logLikelihood = 0.0
                                let base = cell * stride
                                for index in 0..<beacons.count {
                                    let residual = rssis[index] - Double(model[base + beacons[index]])
                                    // The halves' normalising constants are the same for every
                                    // room, so they cancel in the relative log-likelihood.
                                    logLikelihood -= log1p(residual * residual * (residual < 0 ? inverseWeakerScale2 : inverseScale2))
                                }
                                values[cell] = logLikelihood
                            }
                        }
                    }
                }
            }
            let largest = values.max()!
            return largest + log(values.reduce(0) { $0 + exp($1 - largest) } / Double(cells))
        }
        guard let best = logs.max(), best.isFinite else { return nil }
        return logs.map { $0 - best }
    }
}

/// A room's floor sampled on a square grid, the step widened so that at most `maximumCells`
/// points are kept; counted in whole cells so a huge or degenerate outline cannot stall it.
enum RoomGrid {
    static func cells(of outline: Polygon, cellSize: Double, maximumCells: Int) -> [Position] {
        guard !outline.vertices.isEmpty else { return [] }
        let xs = outline.vertices.map(\.x), ys = outline.vertices.map(\.y)
        let minX = xs.min()!, minY = ys.min()!
        let width = xs.max()! - minX, height = ys.max()! - minY
        guard width.isFinite, height.isFinite else { return [outline.centroid] }
        let limit = max(1, maximumCells)
        let step = max(cellSize, (width * height / Double(limit)).squareRoot(), 1e-3)
        let columns = Int(min((width / step).rounded(.up), Double(limit)))
        let rows = Int(min((height / step).rounded(.up), Double(limit)))
        var cells: [Position] = []
        for row in 0..<max(0, rows) where cells.count < limit {
            for column in 0..<max(0, columns) where cells.count < limit {
                let point = Position(x: minX + (Double(column) + 0.5) * step, y: minY + (Double(row) + 0.5) * step)
                if outline.contains(point) { cells.append(point) }
            }
        }
        return cells.isEmpty ? [outline.centroid] : cells
    }
}
