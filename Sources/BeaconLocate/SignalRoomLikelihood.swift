import BeaconKit
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
    /// directions[room][(cell * anchorCount + anchor) * 2 ...+1]: the unit vector from the cell
    /// to the anchor; empty unless made with `modelsBody`.
    private let directions: [[Float]]

    /// The most model values tabulated (cells × anchors over all rooms): rooms get coarser
    /// grids on large maps, so memory and the cost of a cycle stay bounded.
    public static let maximumEntries = 2_000_000

    /// `anchors` should model the walls (``AnchorSet/init(map:model:attenuatingWalls:wallLosses:)`` with
    /// `attenuatingWalls`), or only distance counts. At most `maximumCells` cells per room, fewer
    /// when rooms × cells × anchors would pass ``maximumEntries``.
    /// `modelsBody` keeps the direction of each anchor from each cell, so that
    /// ``logLikelihoods(of:weakerLossScale:body:)`` can model the user's body (twice the memory).
    public init(rooms: [Room], anchors: AnchorSet, lossScale: Double = 5, weakerLossScale: Double? = nil, temperature: Double = 0.5,
                outlierShare: Double = 0.01, cellSize: Double = 1, maximumCells: Int = 400, modelsBody: Bool = false) {
        self.lossScale = max(0.5, lossScale)
        self.weakerLossScale = Self.validScale(weakerLossScale, otherwise: self.lossScale)
        self.temperature = min(1, max(0.01, temperature))
        self.outlierShare = min(max(outlierShare, 0), 1)
        anchorCount = anchors.xs.count
        let model = anchors.model
        let cellsPerRoom = max(1, min(maximumCells, Self.maximumEntries / max(1, rooms.count * max(1, anchorCount))))
        let grids = rooms.map { RoomGrid.cells(of: $0.outline, cellSize: cellSize, maximumCells: cellsPerRoom) }
        expected = grids.map { cells in
            cells.flatMap { cell in
                anchors.xs.indices.map { anchor in
                    let dx = cell.x - anchors.xs[anchor], dy = cell.y - anchors.ys[anchor]
                    return Float(model.expectedRSSI(power: anchors.powers[anchor], squaredDistance: dx * dx + dy * dy)
                        - anchors.wallLoss(cell.x, cell.y, anchor))
                }
            }
        }
        directions = !modelsBody ? [] : grids.map { cells in
            cells.flatMap { cell in
                anchors.xs.indices.flatMap { anchor -> [Float] in
                    let dx = anchors.xs[anchor] - cell.x, dy = anchors.ys[anchor] - cell.y
                    let length = (dx * dx + dy * dy).squareRoot()
                    return length > 1e-9 ? [Float(dx / length), Float(dy / length)] : [0, 0]
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
    ///
    /// With `body` (and made with `modelsBody`), each cell's likelihood is the mean over the
    /// body's headings of the readings' likelihood with the beacons behind the user expected
    /// `body.loss` dB weaker (``BodyShadow``).
    public func logLikelihoods(of readings: [Reading], weakerLossScale: Double? = nil, body: BodyShadow? = nil) -> [Double]? {
        let usable = readings.filter { $0.beacon >= 0 && $0.beacon < anchorCount && $0.rssi.isFinite }
        guard !usable.isEmpty, !expected.isEmpty else { return nil }
        let inverseScale2 = 1 / (lossScale * lossScale)
        let below = Self.validScale(weakerLossScale, otherwise: self.weakerLossScale)
        let inverseWeakerScale2 = 1 / (below * below)
        let beacons = usable.map(\.beacon), rssis = usable.map(\.rssi)
        let stride = max(1, anchorCount)
        // Unsafe buffers: this loop runs cells × readings times per subject and cycle, and a
        // debug build (the test suite's) spends most of it in bounds checks otherwise.
        let shadow = directions.isEmpty ? nil : body.map(BodyHeadings.init)
        let logs = expected.indices.map { room -> Double in
            let table = expected[room]
            let cells = table.count / stride
            guard cells > 0 else { return -Double.infinity }
            var values = [Double](repeating: 0, count: cells)
            table.withUnsafeBufferPointer { model in
                beacons.withUnsafeBufferPointer { beacons in
                    rssis.withUnsafeBufferPointer { rssis in
                        values.withUnsafeMutableBufferPointer { values in
                            if let shadow {
                                directions[room].withUnsafeBufferPointer { directions in
                                    for cell in 0..<cells {
                                        values[cell] = shadow.logLikelihood(cell: cell, stride: stride, model: model, directions: directions, beacons: beacons,
                                                                            rssis: rssis, inverseScale2: inverseScale2, inverseWeakerScale2: inverseWeakerScale2)
                                    }
                                }
                                return
                            }
                            for cell in 0..<cells {
                                var logLikelihood = 0.0
                                let base = cell * stride
                                for index in 0..<beacons.count {
                                    let residual = rssis[index] - Double(model[base + beacons[index]])
                                    // The halves' normalising constants are the same for every
                                    // room, so they cancel in the relative log-likelihood.
                                    logLikelihood -= Self.cauchyLoss(residual, inverseScale2: inverseScale2, inverseWeakerScale2: inverseWeakerScale2)
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

extension SignalRoomLikelihood {
    @inline(__always)
    static func cauchyLoss(_ residual: Double, inverseScale2: Double, inverseWeakerScale2: Double) -> Double {
        log1p(residual * residual * (residual < 0 ? inverseWeakerScale2 : inverseScale2))
    }
}

/// A receiver carried by a person (a phone in a hand or a pocket) hears the beacons behind the
/// person through the body, which takes several dB off them; the person's heading is not known.
/// The signal model then asks, per place, how well the readings fit each of `headings` equally
/// likely headings, a beacon within `halfAngle` of straight behind expected `loss` dB weaker,
/// and averages. Published measurements of the body's shadow at 2.4 GHz are of the order of
/// 10 dB and more behind the body; the default takes 10 dB over ±60°.
public struct BodyShadow: Sendable, Hashable {
    public var loss: Double
    /// Radians.
    public var halfAngle: Double
    public var headings: Int

    public init(loss: Double = 10, halfAngle: Double = Double.pi / 3, headings: Int = 8) {
        self.loss = loss.isFinite ? min(max(loss, 0), 40) : 10
        self.halfAngle = halfAngle.isFinite ? min(max(halfAngle, 0), Double.pi) : Double.pi / 3
        self.headings = min(max(headings, 1), 32)
    }
}

/// ``BodyShadow`` as the likelihood loop reads it: the directions straight behind each heading.
struct BodyHeadings {
    let loss: Double
    let cosineLimit: Float
    let behindX: [Float], behindY: [Float]

    init(_ body: BodyShadow) {
        loss = body.loss
        cosineLimit = Float(cos(body.halfAngle))
        let angles = (0..<body.headings).map { 2 * Double.pi * Double($0) / Double(body.headings) + Double.pi }
        behindX = angles.map { Float(cos($0)) }
        behindY = angles.map { Float(sin($0)) }
    }

    /// log(mean over headings of the readings' likelihood) at one cell.
    func logLikelihood(cell: Int, stride: Int, model: UnsafeBufferPointer<Float>, directions: UnsafeBufferPointer<Float>,
                       beacons: UnsafeBufferPointer<Int>, rssis: UnsafeBufferPointer<Double>,
                       inverseScale2: Double, inverseWeakerScale2: Double) -> Double {
        let base = cell * stride
        var largest = -Double.infinity
        // At most 32 headings (``BodyShadow``): kept inline, as this runs per cell and cycle.
        var perHeading = InlineArray<32, Double>(repeating: 0)
        for heading in behindX.indices {
            var logLikelihood = 0.0
            for index in 0..<beacons.count {
                let entry = base + beacons[index]
                let behind = directions[2 * entry] * behindX[heading] + directions[2 * entry + 1] * behindY[heading] >= cosineLimit
                let expected = Double(model[entry]) - (behind ? loss : 0)
                logLikelihood -= SignalRoomLikelihood.cauchyLoss(rssis[index] - expected, inverseScale2: inverseScale2,
                                                                 inverseWeakerScale2: inverseWeakerScale2)
            }
            perHeading[heading] = logLikelihood
            largest = max(largest, logLikelihood)
        }
        var sum = 0.0
        for heading in behindX.indices { sum += exp(perHeading[heading] - largest) }
        return largest + log(sum / Double(behindX.count))
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
