import BeaconKit
import Foundation

/// The map's anchors laid out for the estimators: positions and calibrated powers in arrays
/// indexed like `SiteMap.beacons`, so the inner loops touch no dictionaries.
public struct AnchorSet: Sendable, Hashable {
    public let xs: [Double]
    public let ys: [Double]
    public let powers: [Double]
    public let model: PathLossModel
    public let width: Double
    public let height: Double
    /// The map's walls between each anchor and any spot, when the estimators should model them
    /// (trilateration and the particle filter subtract it from the expected RSSI).
    public let walls: WallLossGrid?

    /// `attenuatingWalls` puts the map's wall losses into the trilateration and particle
    /// filter models; without it walls only stop particles. `wallLosses`, the table of an
    /// earlier set of the same map's anchors, is taken instead of tabulating the walls again
    /// (a large floor's table takes most of a second, and a new calibration does not change it);
    /// one made for other anchors or another map is ignored.
    public init(map: SiteMap, model: PathLossModel, attenuatingWalls: Bool = false, wallLosses: WallLossGrid? = nil) {
        xs = map.beacons.map(\.position.x)
        ys = map.beacons.map(\.position.y)
        powers = map.beacons.map { model.power(of: $0) }
        self.model = model
        width = map.width
        height = map.height
        let positions = map.beacons.map(\.position)
        walls = attenuatingWalls && !map.walls.isEmpty
            ? (wallLosses.flatMap { $0.fits(map, anchors: positions) ? $0 : nil } ?? WallLossGrid(map: map, anchors: positions)) : nil
    }

    /// The wall loss between a spot and an anchor (0 without `walls`).
    @inline(__always)
    func wallLoss(_ x: Double, _ y: Double, _ anchor: Int) -> Double {
        walls?.loss(x, y, anchor: anchor) ?? 0
    }

    func clamped(_ x: Double, _ y: Double) -> Position {
        Position(x: min(width, max(0, x)), y: min(height, max(0, y)))
    }
}

/// The mean of the heard beacons' positions, each weighted by the distance its RSSI implies, so
/// nearer beacons pull harder.
///
/// By default every heard beacon counts with weight 1/d (the project's first baseline). With
/// `strongest` set, only that many of the strongest readings count, weighted by 1/d² of the
/// model's slant distance, i.e. `10^((rssi − power)/(5·n))`: a receiver's unknown gain scales
/// every weight alike and so cancels, and far beacons, whose RSSI says least about distance, drop
/// out (the textbook top-k weighted centroid; with n = 2 and equal powers it is exactly the
/// `10^(RSSI/10)`-weighted centroid of the k strongest).
public struct WeightedCentroid: Sendable, Hashable {
    public let anchors: AnchorSet
    /// How many of the strongest readings count (nil: all, weighted 1/d).
    public let strongest: Int?

    /// The k of ``init(anchors:strongest:)`` that real data favours (UJI, UCI: docs/locate.md).
    public static let defaultStrongest = 4

    public init(anchors: AnchorSet, strongest: Int? = nil) {
        self.anchors = anchors
        self.strongest = strongest.map { max(1, $0) }
    }

    private func weight(_ reading: Reading) -> Double {
        if strongest != nil {
            return pow(10, (reading.rssi - anchors.powers[reading.beacon]) / (5 * anchors.model.exponent))
        }
        let distance = anchors.model.distance(rssi: reading.rssi, power: anchors.powers[reading.beacon])
        return 1 / max(0.5, distance)
    }

    public func locate(_ readings: [Reading]) -> Fix? {
        let chosen = strongest.map { count in
            Array(readings.sorted { ($0.rssi - anchors.powers[$0.beacon], $1.beacon) > ($1.rssi - anchors.powers[$1.beacon], $0.beacon) }.prefix(count))
        } ?? readings
        var sumWeight = 0.0, sumX = 0.0, sumY = 0.0
        for reading in chosen {
            let weight = weight(reading)
            sumWeight += weight
            sumX += weight * anchors.xs[reading.beacon]
            sumY += weight * anchors.ys[reading.beacon]
        }
        guard sumWeight > 0, sumWeight.isFinite else { return nil }
        let centre = Position(x: sumX / sumWeight, y: sumY / sumWeight)
        // The spread of the contributing anchors, plus the distance the strongest one implies:
        // one heard beacon only says "somewhere around it".
        var spread = 0.0, nearest = Double.infinity
        for reading in chosen {
            let distance = anchors.model.distance(rssi: reading.rssi, power: anchors.powers[reading.beacon])
            let weight = weight(reading)
            let dx = anchors.xs[reading.beacon] - centre.x, dy = anchors.ys[reading.beacon] - centre.y
            spread += weight * (dx * dx + dy * dy)
            nearest = min(nearest, distance)
        }
        let radius = (spread / sumWeight + nearest * nearest).squareRoot()
        return Fix(position: centre, uncertainty: radius, method: .centroid)
    }
}

/// How the estimators treat the receiver's gain (and the beacons' common power offset).
public enum GainHandling: String, Sendable, Hashable, Codable {
    /// The readings are taken at face value once the calibrated gain is taken off: the model's
    /// absolute RSSI counts (the right choice after a survey fitted the receiver).
    case calibrated
    /// The receiver's gain is unknown: only differences between a scan's readings count. The
    /// centroid keeps the strongest beacons (weights are relative), trilateration and the particle
    /// filter fit a common offset per scan (per particle) and score what is left.
    case unknown
}
