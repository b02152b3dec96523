import BeaconKit
import Foundation

/// Nonlinear least squares in the RSSI domain: find the point whose predicted RSSI to every
/// heard beacon best matches the readings. Residuals go through a Cauchy loss (iteratively
/// reweighted), so one shadowed beacon reading 15 dB low is mostly ignored instead of
/// dragging the fix away from it. Starts from the weighted centroid, which also anchors the
/// solution weakly when fewer than three beacons are heard.
public struct RobustTrilateration: Sendable, Hashable {
    public let anchors: AnchorSet
    /// Cauchy scale in dB: residuals well beyond it count less and less.
    public var lossScale: Double
    /// Pull towards the starting centroid (dB² per m²); keeps 1–2 beacon fixes bounded.
    public var priorWeight: Double
    public var maximumIterations: Int
    /// With ``GainHandling/unknown`` the fit profiles out one offset common to the scan's
    /// readings (the receiver's gain, a shared power error): at every step the offset is the
    /// Cauchy-weighted mean residual, and the step follows the residuals and gradients less
    /// their weighted means, so only the differences between beacons place the fix. It starts
    /// from the strongest-four centroid, which needs no gain either.
    public var gain: GainHandling

    public init(anchors: AnchorSet, lossScale: Double = 5, priorWeight: Double = 0.02, maximumIterations: Int = 12, gain: GainHandling = .calibrated) {
        self.anchors = anchors
        self.lossScale = lossScale
        self.priorWeight = priorWeight
        self.maximumIterations = maximumIterations
        self.gain = gain
    }

    public func locate(_ readings: [Reading]) -> Fix? {
        if gain == .unknown { return locateWithUnknownGain(readings) }
        guard let start = WeightedCentroid(anchors: anchors).locate(readings) else { return nil }
        let model = anchors.model
        let slope = -10 * model.exponent / M_LN10  // d(predicted RSSI)/d(ln squared distance) × 2
        let h2 = model.heightOffset * model.heightOffset
        let inverseScale2 = 1 / (lossScale * lossScale)
        var x = start.position.x, y = start.position.y
        var a11 = 0.0, a12 = 0.0, a22 = 0.0, residualSum = 0.0, weightSum = 0.0

        func cost(_ px: Double, _ py: Double) -> Double {
            var total = 0.0
            for reading in readings {
                let dx = px - anchors.xs[reading.beacon], dy = py - anchors.ys[reading.beacon]
                let r = reading.rssi - model.expectedRSSI(power: anchors.powers[reading.beacon], squaredDistance: dx * dx + dy * dy)
                    + anchors.wallLoss(px, py, reading.beacon)
                total += log1p(r * r * inverseScale2)
            }
            let px0 = px - start.position.x, py0 = py - start.position.y
            return total + priorWeight * (px0 * px0 + py0 * py0) * inverseScale2
        }

        var currentCost = cost(x, y)
        for _ in 0..<maximumIterations {
            a11 = priorWeight; a12 = 0; a22 = priorWeight
            var b1 = priorWeight * (start.position.x - x), b2 = priorWeight * (start.position.y - y)
            residualSum = 0; weightSum = 0
            for reading in readings {
                let dx = x - anchors.xs[reading.beacon], dy = y - anchors.ys[reading.beacon]
                let s = dx * dx + dy * dy + h2
                // Walls are taken as fixed over a step: their loss changes only where a step crosses one.
                let r = reading.rssi - (anchors.powers[reading.beacon] - 5 * model.exponent * log10(s) - anchors.wallLoss(x, y, reading.beacon))
                let w = 1 / (1 + r * r * inverseScale2)
                let gx = slope * dx / s, gy = slope * dy / s
                a11 += w * gx * gx; a12 += w * gx * gy; a22 += w * gy * gy
                b1 += w * r * gx; b2 += w * r * gy
                residualSum += w * r * r; weightSum += w
            }
            let determinant = a11 * a22 - a12 * a12
            guard determinant > 1e-12 else { break }
            var stepX = (a22 * b1 - a12 * b2) / determinant
            var stepY = (a11 * b2 - a12 * b1) / determinant
            // Halve the step until the robust cost falls (Gauss–Newton can overshoot near a beacon).
            var accepted = false
            for _ in 0..<5 {
                let trial = anchors.clamped(x + stepX, y + stepY)
                let trialCost = cost(trial.x, trial.y)
                if trialCost <= currentCost {
                    stepX = trial.x - x; stepY = trial.y - y
                    x = trial.x; y = trial.y
                    currentCost = trialCost
                    accepted = true
                    break
                }
                stepX *= 0.5; stepY *= 0.5
            }
            if !accepted || stepX * stepX + stepY * stepY < 1e-4 { break }
        }
        // Covariance ≈ σ²·A⁻¹, σ² the weighted residual variance (at least 3 dB: RSSI is never
        // better than that), so the radius grows where the geometry is poor.
        let sigma2 = max(9, weightSum > 0 ? residualSum / weightSum : 9)
        let determinant = a11 * a22 - a12 * a12
        let trace = determinant > 1e-12 ? (a11 + a22) / determinant : .infinity
        let diagonal = (anchors.width * anchors.width + anchors.height * anchors.height).squareRoot()
        let radius = min(diagonal, (sigma2 * trace).squareRoot())
        return Fix(position: Position(x: x, y: y), uncertainty: radius, method: .trilateration)
    }

    /// The scan's residuals at a spot, less their Cauchy-weighted mean (the offset), with the
    /// robust cost and each reading's weight.
    private func centredResiduals(_ readings: [Reading], _ x: Double, _ y: Double, into residuals: inout [Double], weights: inout [Double]) -> Double {
        let model = anchors.model
        let inverseScale2 = 1 / (lossScale * lossScale)
        for (index, reading) in readings.enumerated() {
            let dx = x - anchors.xs[reading.beacon], dy = y - anchors.ys[reading.beacon]
            residuals[index] = reading.rssi - model.expectedRSSI(power: anchors.powers[reading.beacon], squaredDistance: dx * dx + dy * dy)
                + anchors.wallLoss(x, y, reading.beacon)
        }
        // Two passes: the offset from the median first, so one shadowed beacon does not set it.
        var offset = Self.median(residuals)
        for _ in 0..<2 {
            var sum = 0.0, weightSum = 0.0
            for index in residuals.indices {
                let r = residuals[index] - offset
                let w = 1 / (1 + r * r * inverseScale2)
                sum += w * residuals[index]; weightSum += w
            }
            offset = sum / weightSum
        }
        var cost = 0.0
        for index in residuals.indices {
            residuals[index] -= offset
            let r2 = residuals[index] * residuals[index] * inverseScale2
            weights[index] = 1 / (1 + r2)
            cost += log1p(r2)
        }
        return cost
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    private func locateWithUnknownGain(_ readings: [Reading]) -> Fix? {
        guard let start = WeightedCentroid(anchors: anchors, strongest: WeightedCentroid.defaultStrongest).locate(readings) else { return nil }
        // One or two readings carry no difference worth fitting.
        guard readings.count >= 3 else { return Fix(position: start.position, uncertainty: start.uncertainty, method: .trilateration) }
        let model = anchors.model
        let slope = -10 * model.exponent / M_LN10
        let h2 = model.heightOffset * model.heightOffset
        let inverseScale2 = 1 / (lossScale * lossScale)
        var residuals = [Double](repeating: 0, count: readings.count), weights = residuals
        var gxs = residuals, gys = residuals
        func cost(_ px: Double, _ py: Double) -> Double {
            let px0 = px - start.position.x, py0 = py - start.position.y
            return centredResiduals(readings, px, py, into: &residuals, weights: &weights) + priorWeight * (px0 * px0 + py0 * py0) * inverseScale2
        }
        var x = start.position.x, y = start.position.y
        var currentCost = cost(x, y)
        var a11 = 0.0, a12 = 0.0, a22 = 0.0, residualSum = 0.0, weightSum = 0.0
        for _ in 0..<maximumIterations {
            _ = cost(x, y)
            var meanGx = 0.0, meanGy = 0.0
            weightSum = 0
            for (index, reading) in readings.enumerated() {
                let dx = x - anchors.xs[reading.beacon], dy = y - anchors.ys[reading.beacon]
                let s = dx * dx + dy * dy + h2
                gxs[index] = slope * dx / s; gys[index] = slope * dy / s
                meanGx += weights[index] * gxs[index]; meanGy += weights[index] * gys[index]; weightSum += weights[index]
            }
            meanGx /= weightSum; meanGy /= weightSum
            a11 = priorWeight; a12 = 0; a22 = priorWeight
            var b1 = priorWeight * (start.position.x - x), b2 = priorWeight * (start.position.y - y)
            residualSum = 0
            for index in readings.indices {
                let w = weights[index], r = residuals[index]
                let gx = gxs[index] - meanGx, gy = gys[index] - meanGy
                a11 += w * gx * gx; a12 += w * gx * gy; a22 += w * gy * gy
                b1 += w * r * gx; b2 += w * r * gy
                residualSum += w * r * r
            }
            let determinant = a11 * a22 - a12 * a12
            guard determinant > 1e-12 else { break }
            var stepX = (a22 * b1 - a12 * b2) / determinant
            var stepY = (a11 * b2 - a12 * b1) / determinant
            var accepted = false
            for _ in 0..<5 {
                let trial = anchors.clamped(x + stepX, y + stepY)
                let trialCost = cost(trial.x, trial.y)
                if trialCost <= currentCost {
                    stepX = trial.x - x; stepY = trial.y - y
                    x = trial.x; y = trial.y
                    currentCost = trialCost
                    accepted = true
                    break
                }
                stepX *= 0.5; stepY *= 0.5
            }
            if !accepted || stepX * stepX + stepY * stepY < 1e-4 { break }
        }
        let sigma2 = max(9, weightSum > 0 ? residualSum / weightSum : 9)
        let determinant = a11 * a22 - a12 * a12
        let trace = determinant > 1e-12 ? (a11 + a22) / determinant : .infinity
        let diagonal = (anchors.width * anchors.width + anchors.height * anchors.height).squareRoot()
        return Fix(position: Position(x: x, y: y), uncertainty: min(diagonal, (sigma2 * trace).squareRoot()), method: .trilateration)
    }
}
