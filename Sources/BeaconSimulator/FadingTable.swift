import Foundation

/// Rician fading samples by inverse-transform sampling from precomputed distributions, one per
/// K-factor step of 0.5 dB (and one for Rayleigh). Drawing a sample costs one random number and
/// an interpolation instead of two Gaussians and two logarithms, which is most of the per-packet
/// cost in a large venue. Each table is the sorted power (dB) of `samplesPerTable` draws of
/// `Propagation.ricianFadingDecibels`, so it is that exact model, resolved to 1/8192 in
/// probability.
struct FadingTable: Sendable {
    static let samplesPerTable = 8192
    static let stepsPerDecibel = 2.0

    /// tables[0] is Rayleigh; tables[i] for i ≥ 1 has K = (i − 1) / stepsPerDecibel dB.
    private let values: [Float]
    let tableCount: Int

    init(kFactorNear: Double, random: inout SeededGenerator) {
        tableCount = 2 + Int((max(0, kFactorNear) * Self.stepsPerDecibel).rounded(.up))
        var values: [Float] = []
        values.reserveCapacity(tableCount * Self.samplesPerTable)
        for table in 0..<tableCount {
            let kFactor = table == 0 ? 0 : pow(10, Double(table - 1) / Self.stepsPerDecibel / 10)
            let samples = (0..<Self.samplesPerTable).map { _ in Float(Propagation.ricianFadingDecibels(kFactor: kFactor, random: &random)) }
            values += samples.sorted()
        }
        self.values = values
    }

    /// The table for a linear K-factor (0 = Rayleigh).
    func table(forKFactor kFactor: Double) -> Int32 {
        guard kFactor > 0 else { return 0 }
        let decibels = max(0, 10 * log10(kFactor))
        return Int32(min(tableCount - 1, 1 + Int((decibels * Self.stepsPerDecibel).rounded())))
    }

    /// A fading sample in dB from a table, for a uniform variate in [0, 1).
    @inline(__always)
    func sample(table: Int32, uniform: Double) -> Double {
        let position = uniform * Double(Self.samplesPerTable - 1)
        let index = Int(position)
        let base = Int(table) * Self.samplesPerTable + index
        let fraction = Float(position - Double(index))
        return Double(values[base] + (values[base + 1] - values[base]) * fraction)
    }
}
