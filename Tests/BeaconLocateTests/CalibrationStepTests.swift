import BeaconKit
import Foundation
import Testing
@testable import BeaconLocate

/// `SiteCalibrator.solveStep` eliminates the beacons' powers before solving; it must give the
/// same parameters as the whole normal equations solved densely, as the fit did before.
@Suite struct CalibrationStepTests {
    /// The normal equations of one weighted step over `[n, P…, G…]`, assembled entry by entry
    /// and solved by dense elimination: the reference.
    static func denseStep(rows: [SiteCalibrator.LinkRow], weights: [Double], receivers: Int, priorPowers: [Double],
                          priors: SiteCalibrator.Priors) -> [Double]? {
        let beacons = priorPowers.count
        let size = 1 + beacons + receivers
        var normal = [Double](repeating: 0, count: size * size)
        var rhs = [Double](repeating: 0, count: size)
        func add(_ entries: [(Int, Double)], _ value: Double, _ weight: Double) {
            for (i, a) in entries {
                rhs[i] += weight * a * value
                for (j, b) in entries { normal[i * size + j] += weight * a * b }
            }
        }
        for (index, row) in rows.enumerated() {
            add([(0, -10 * row.logDistance), (1 + row.beacon, 1), (1 + beacons + row.receiver, 1)], row.rssi, weights[index])
        }
        add([(0, 1)], 2, priors.exponentWeight)
        for (index, power) in priorPowers.enumerated() { add([(1 + index, 1)], power, priors.powerWeight) }
        add((0..<receivers).map { (1 + beacons + $0, 1.0) }, 0, SiteCalibrator.gainSumWeight)
        return SiteCalibrator.solve(normal, rhs, size: size)
    }

    @Test(arguments: [(beacons: 12, receivers: 4, seed: UInt64(1)), (beacons: 40, receivers: 9, seed: 2), (beacons: 3, receivers: 20, seed: 3)])
    func eliminatingThePowersGivesTheDenseSolution(site: (beacons: Int, receivers: Int, seed: UInt64)) throws {
        var generator = SplitMix64(seed: site.seed)
        var rows: [SiteCalibrator.LinkRow] = []
        func link(_ beacon: Int, _ receiver: Int) {
            let distance = Double.random(in: 0.5...25, using: &generator)
            rows.append(.init(beacon: beacon, receiver: receiver, logDistance: log10(distance),
                              rssi: -59 - 22 * log10(distance) + Double.random(in: -6...6, using: &generator)))
        }
        for beacon in 0..<site.beacons {
            // Some beacons heard by one receiver at one distance only: their power rests on the prior.
            let heardBy = beacon % 5 == 0 ? [beacon % site.receivers] : (0..<site.receivers).filter { _ in Bool.random(using: &generator) }
            for receiver in heardBy.isEmpty ? [0] : heardBy { link(beacon, receiver) }
        }
        // As in a fit, every receiver hears something.
        for receiver in 0..<site.receivers where !rows.contains(where: { $0.receiver == receiver }) { link(receiver % site.beacons, receiver) }
        let weights = rows.map { _ in Double.random(in: 0.1...1, using: &generator) }
        let priorPowers = (0..<site.beacons).map { _ in Double.random(in: -70 ... -50, using: &generator) }
        for priors in [SiteCalibrator.Priors.weak, .fixedLinks] {
            let reference = try #require(Self.denseStep(rows: rows, weights: weights, receivers: site.receivers, priorPowers: priorPowers, priors: priors))
            let step = try #require(SiteCalibrator.solveStep(rows: rows, weights: weights, receivers: site.receivers, priorPowers: priorPowers, priors: priors))
            #expect(step.count == reference.count)
            let largest = zip(step, reference).map { abs($0 - $1) }.max() ?? .infinity
            #expect(largest < 1e-7, "largest difference \(largest)")
        }
    }

    /// Beacons are bounded by the links alone now (the dense fit stopped at 1,500 parameters);
    /// receivers, which stay in the dense part, by `maximumReceivers`.
    @Test func aSiteOfTwoThousandBeaconsFitsAndTooManyReceiversAreRefused() throws {
        var calibrator = SiteCalibrator(priors: .weak)
        var powers: [String: Double] = [:]
        for beacon in 0..<2_000 {
            let power = -59 + Double(beacon % 7) - 3
            powers["b\(beacon)"] = power
            for receiver in 0..<4 {
                let distance = 1 + Double((beacon * 7 + receiver * 3) % 20)
                calibrator.add(beacon: "b\(beacon)", receiver: "r\(receiver)", distance: distance, rssi: power + Double(receiver) - 1.5 - 22 * log10(distance))
            }
        }
        let fitted = try #require(calibrator.fit())
        #expect(abs(fitted.exponent - 2.2) < 0.01)
        let worst = powers.map { abs((fitted.beaconPower[$0.key] ?? .infinity) - $0.value) }.max() ?? .infinity
        #expect(worst < 0.1, "largest power error \(worst) dB")
        #expect(abs((fitted.receiverGain["r3"] ?? 0) - 1.5) < 0.1)

        var crowded = SiteCalibrator()
        for receiver in 0...SiteCalibrator.maximumReceivers {
            crowded.add(beacon: "b", receiver: "r\(receiver)", distance: 1 + Double(receiver % 10), rssi: -70)
        }
        #expect(crowded.fit() == nil)
    }
}
