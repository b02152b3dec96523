import Foundation

/// The parameters of the default distance model, ``DistanceModel/robust(_:)``: log-distance
/// path loss whose inputs are known to be uncertain, answered with the most probable distance
/// rather than the one that trusts the advertised power completely.
///
/// The model (all in dB; x = advertised measured power − filtered RSSI):
///
///     x = 10·n·log10(d) + shortfall + e,   e ~ N(0, powerSpread² + shadowing²)
///     log10(d) ~ N(log10(typicalDistance), distanceSpread²)           (what ranging is used at)
///
/// Both are Gaussian in log10(d), so the posterior is too, and its median (the estimate with the
/// smallest expected absolute error in log distance) is a weighted mean:
///
///     log10(d̂) = w·(x − shortfall)/(10·n) + (1 − w)·log10(typicalDistance)
///     w = distanceSpread² / (distanceSpread² + (σ/(10·n))²),   σ² = powerSpread² + shadowing²
///
/// With the defaults w ≈ 0.51: an advertised power 4.5 dB wrong (the Kontakt beacons) moves
/// the estimate by a factor 10^(0.51·4.5/20) ≈ 1.3 instead of 1.7 with plain log-distance, and
/// a phone 4 dB less sensitive by 1.27 instead of 1.58. The price is a pull toward
/// `typicalDistance`: estimates are compressed (a beacon truly at 10 m with a correct power is
/// reported at about 4 m, one at 0.5 m at about 1 m). docs/monitoring-and-ranging.md gives the
/// measured figures on both sides.
///
/// Every default comes from real data in the project's shared data (see
/// `RobustRangingFitTests`, which refits them):
/// - `pathLossExponent` 2.0: AltBeacon's PathLossDistanceCalculator trainer table (6 phones × 3
///   distances), pooled least squares with one intercept per phone: n = 1.97; checked on the
///   Kontakt sweeps with one intercept per beacon (2.42 and 1.86 over 0.5–5 m).
/// - `powerSpread` 4.1 dB: the spread of the 1 m level across the trainer table's six phones (one
///   beacon, six receivers): how far a phone may sit from the calibrating one.
/// - `shortfall` 3.2 dB: how far real 1 m readings sit below the reference, the mean of two
///   measurements: the Kontakt beacons (advertise −77 dBm, read −81.5 dBm at 1 m: 4.5 dB) and the
///   trainer table's phones (mean 1 m level −60.9 dBm against AltBeacon's reference −59: 1.9 dB).
/// - `shadowing` 4 dB: log-normal shadowing indoors, 3–8 dB (Rappaport, *Wireless
///   Communications*, §4.9.2); the Kontakt sweeps' residual after a per-beacon fit is 2.8–4.5 dB.
/// - `typicalDistance` 2.25 m and `distanceSpread` 0.289 decades: the geometric mean and the
///   standard deviation of log10(distance) of the trainer table's 18 measurements (1–5 m); the
///   Kontakt sweeps' own distances agree (1.83 m and 2.10 m, 0.30 and 0.33 decades) but are not
///   used, since they score the model.
public struct RobustRangingParameters: Sendable, Hashable {
    /// n of the path-loss law (a beacon's or site's override in ``DistanceConfiguration`` replaces it).
    public var pathLossExponent: Double
    /// dB by which real readings at 1 m fall short of the advertised measured power, on average.
    public var shortfall: Double
    /// σ in dB of the 1 m level between receivers (and of beacon calibration errors).
    public var powerSpread: Double
    /// σ in dB of shadowing left in a filtered reading.
    public var shadowing: Double
    /// Median distance, in metres, of the prior over distances a beacon is ranged at.
    public var typicalDistance: Double
    /// σ of that prior in decades of distance (log10 metres).
    public var distanceSpread: Double

    public init(pathLossExponent: Double = 2.0, shortfall: Double = 3.2, powerSpread: Double = 4.1,
                shadowing: Double = 4.0, typicalDistance: Double = 2.25, distanceSpread: Double = 0.289) {
        self.pathLossExponent = pathLossExponent
        self.shortfall = shortfall
        self.powerSpread = powerSpread
        self.shadowing = shadowing
        self.typicalDistance = typicalDistance
        self.distanceSpread = distanceSpread
    }

    public static let `default` = RobustRangingParameters()

    /// The weight of the measurement against the prior, for exponent `n`: 1 trusts the reading
    /// alone (plain log-distance), 0 ignores it.
    @inlinable
    public func measurementWeight(pathLossExponent n: Double) -> Double {
        let noise = (powerSpread * powerSpread + shadowing * shadowing).squareRoot() / (10 * n)
        let prior = distanceSpread * distanceSpread
        guard prior > 0 else { return 0 }
        return prior / (prior + noise * noise)
    }

    /// The posterior median distance in metres for a loss of `loss` dB (measured power − RSSI).
    @inlinable
    public func distance(loss: Double, pathLossExponent override: Double? = nil) -> Double? {
        let n = override ?? pathLossExponent
        guard n > 0, n.isFinite, typicalDistance > 0, loss.isFinite else { return nil }
        let weight = measurementWeight(pathLossExponent: n)
        let measured = (loss - shortfall) / (10 * n)
        return pow(10, weight * measured + (1 - weight) * log10(typicalDistance))
    }
}
