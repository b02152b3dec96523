import BeaconKit
import Foundation

/// A deterministic random number generator: xoshiro256** (Blackman and Vigna, "Scrambled linear
/// pseudorandom number generators", 2018), seeded through SplitMix64 as its authors recommend.
///
/// The simulator never touches `SystemRandomNumberGenerator`: the same seed and scenario give the
/// same sightings on every machine, which is what makes evaluation results reproducible.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    public init(seed: UInt64) {
        var splitMix = SplitMix64(state: seed)
        state = (splitMix.next(), splitMix.next(), splitMix.next(), splitMix.next())
    }

    /// A generator for an independent sub-stream, so that adding a beacon does not shift the
    /// random numbers every other beacon sees.
    public func derived(_ salt: UInt64) -> SeededGenerator {
        var copy = self
        var splitMix = SplitMix64(state: copy.next() ^ (salt &* 0x9E37_79B9_7F4A_7C15))
        copy.state = (splitMix.next(), splitMix.next(), splitMix.next(), splitMix.next())
        return copy
    }

    public mutating func next() -> UInt64 {
        let result = rotateLeft(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotateLeft(state.3, 45)
        return result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform in [lower, upper).
    public mutating func uniform(_ lower: Double, _ upper: Double) -> Double { lower + (upper - lower) * unit() }

    /// A standard normal deviate (Marsaglia's polar method; the spare deviate is discarded so the
    /// generator's state stays a plain value).
    public mutating func gaussian() -> Double { gaussianPair().0 }

    /// Two independent standard normal deviates for the price of one logarithm (Marsaglia's
    /// polar method).
    public mutating func gaussianPair() -> (Double, Double) {
        while true {
            let u = 2 * unit() - 1
            let v = 2 * unit() - 1
            let s = u * u + v * v
            if s > 0 && s < 1 {
                let factor = (-2 * Foundation.log(s) / s).squareRoot()
                return (u * factor, v * factor)
            }
        }
    }

    public static func == (lhs: SeededGenerator, rhs: SeededGenerator) -> Bool {
        lhs.state == rhs.state
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(state.0); hasher.combine(state.1); hasher.combine(state.2); hasher.combine(state.3)
    }

    private func rotateLeft(_ value: UInt64, _ count: UInt64) -> UInt64 { (value << count) | (value >> (64 - count)) }
}
