import BeaconKit
import Foundation

/// A reference scan taken at a known spot (a survey point, or a labelled training scan).
public struct SurveyPoint: Sendable, Hashable {
    public var position: Position
    public var readings: [Reading]

    public init(position: Position, readings: [Reading]) {
        self.position = position
        self.readings = readings
    }
}

/// One scan of a survey tag held still at a known spot, as the site's receivers heard it: the
/// other direction of ``SurveyPoint``, for carried beacons located from gateways. A receiver
/// hears a tag at the tag's power, so the scan keeps the power the tag advertised.
public struct TagSurveyPoint: Sendable, Hashable {
    public var position: Position
    /// The survey tag's measured power (dBm at 1 m, as it advertises it).
    public var measuredPower: Double
    /// RSSI by index in the map's `receivers`.
    public var readings: [Reading]

    public init(position: Position, measuredPower: Double, readings: [Reading]) {
        self.position = position
        self.measuredPower = measuredPower
        self.readings = readings
    }
}

/// Weighted k-nearest neighbours in signal space: the fix is the mean position of the k
/// survey scans whose RSSI vectors are closest to the scan, weighted by closeness. A beacon
/// not heard counts as heard at `floor`, so "not heard here" is information too.
public struct FingerprintIndex: Sendable, Hashable {
    public let beaconCount: Int
    public let floor: Double
    public let neighbours: Int
    private let vectors: [Double]
    private let positions: [Position]

    public init(survey: [SurveyPoint], beaconCount: Int, floor: Double = -105, neighbours: Int = 5) {
        self.beaconCount = beaconCount
        self.floor = floor
        self.neighbours = max(1, neighbours)
        var vectors = [Double](repeating: floor, count: survey.count * beaconCount)
        for (row, point) in survey.enumerated() {
            for reading in point.readings where reading.beacon < beaconCount {
                vectors[row * beaconCount + reading.beacon] = max(floor, reading.rssi)
            }
        }
        self.vectors = vectors
        positions = survey.map(\.position)
    }

    public var count: Int { positions.count }

    public func locate(_ readings: [Reading]) -> Fix? {
        guard !positions.isEmpty, !readings.isEmpty else { return nil }
        var scan = [Double](repeating: floor, count: beaconCount)
        for reading in readings where reading.beacon < beaconCount { scan[reading.beacon] = max(floor, reading.rssi) }
        // Keep the k best (distance, row) pairs in a small sorted array.
        var best: [(distance: Double, row: Int)] = []
        best.reserveCapacity(neighbours + 1)
        for row in positions.indices {
            var sum = 0.0
            let base = row * beaconCount
            for beacon in 0..<beaconCount {
                let difference = scan[beacon] - vectors[base + beacon]
                sum += difference * difference
            }
            if best.count < neighbours || sum < best[best.count - 1].distance {
                let at = best.firstIndex { $0.distance > sum } ?? best.count
                best.insert((sum, row), at: at)
                if best.count > neighbours { best.removeLast() }
            }
        }
        var sumWeight = 0.0, x = 0.0, y = 0.0
        for neighbour in best {
            let weight = 1 / (neighbour.distance.squareRoot() + 1)
            sumWeight += weight
            x += weight * positions[neighbour.row].x
            y += weight * positions[neighbour.row].y
        }
        let centre = Position(x: x / sumWeight, y: y / sumWeight)
        var spread = 0.0
        for neighbour in best {
            let weight = 1 / (neighbour.distance.squareRoot() + 1)
            let offset = positions[neighbour.row].distance(to: centre)
            spread += weight * offset * offset
        }
        return Fix(position: centre, uncertainty: (spread / sumWeight).squareRoot(), method: .fingerprint)
    }
}
