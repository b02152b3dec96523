import Foundation

/// The robust model reduced to `d = 10^(slope·loss + offset)` for the configuration's exponent,
/// so a ranging cycle pays one `pow` per beacon, as plain log-distance does.
struct RobustRangingCoefficients: Sendable {
    var pathLossExponent: Double
    var slope: Double
    var offset: Double
    /// slope and offset times ln 10, for `exp`.
    var naturalSlope: Double
    var naturalOffset: Double

    init?(_ model: DistanceModel) {
        guard case .robust(let parameters) = model else { return nil }
        let n = parameters.pathLossExponent
        guard n > 0, n.isFinite, parameters.typicalDistance > 0 else { return nil }
        let weight = parameters.measurementWeight(pathLossExponent: n)
        pathLossExponent = n
        slope = weight / (10 * n)
        offset = -slope * parameters.shortfall + (1 - weight) * log10(parameters.typicalDistance)
        naturalSlope = slope * M_LN10
        naturalOffset = offset * M_LN10
    }
}

extension HotParameters {
    /// The distance the engine reports: the precomputed robust coefficients when the beacon
    /// uses the configuration's exponent, the model itself otherwise.
    @inline(__always)
    func distance(rssi: Double, measuredPower: MeasuredPower, pathLossExponent: Double?) -> Double? {
        if let robust, pathLossExponent == nil || pathLossExponent == robust.pathLossExponent {
            guard measuredPower.isUsableForDistance, rssi.isFinite else { return nil }
            // exp, not pow(10, …): the same value to a few ulps, at a third of the cost.
            let metres = exp(robust.naturalSlope * (Double(measuredPower.dBm) - rssi) + robust.naturalOffset)
            return metres.isFinite ? metres : nil
        }
        return distanceModel.distance(rssi: rssi, measuredPower: measuredPower, pathLossExponent: pathLossExponent)
    }
}
