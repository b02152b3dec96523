import BeaconKit
import Foundation

/// The four-line baseline every method is measured against on real data: the mean of the
/// positions of the k strongest beacons of a scan, weighted by `10^(RSSI/10)` (received power in
/// milliwatts), on raw RSSI with no model at all. It is kept apart from ``WeightedCentroid`` so
/// that no calibration or tuning of the project's methods can move the yardstick.
public struct StrongestBeaconsCentroid: Sendable, Hashable {
    public let positions: [Position]
    public let strongest: Int

    public init(positions: [Position], strongest: Int = 4) {
        self.positions = positions
        self.strongest = max(1, strongest)
    }

    public func locate(_ readings: [Reading]) -> Position? {
        let chosen = readings.filter { positions.indices.contains($0.beacon) }
            .sorted { ($0.rssi, $1.beacon) > ($1.rssi, $0.beacon) }.prefix(strongest)
        guard let loudest = chosen.first?.rssi else { return nil }
        var sumWeight = 0.0, x = 0.0, y = 0.0
        for reading in chosen {
            // Relative to the loudest, so the weights never underflow.
            let weight = pow(10, (reading.rssi - loudest) / 10)
            sumWeight += weight
            x += weight * positions[reading.beacon].x
            y += weight * positions[reading.beacon].y
        }
        return Position(x: x / sumWeight, y: y / sumWeight)
    }
}
