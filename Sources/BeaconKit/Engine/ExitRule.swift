/// When a silent beacon counts as gone.
public enum ExitRule: Sendable, Hashable {
    /// Exit after silence longer than the beacon's own recent reception pattern allows; see
    /// ``AdaptiveExitParameters``.
    case adaptive(AdaptiveExitParameters)
    /// Exit after a fixed silence, whatever the beacon's rate.
    case fixedDelay(seconds: Double)

    public static let `default` = ExitRule.adaptive(.default)
    /// AltBeacon's region exit period (10 s).
    public static let altBeacon = ExitRule.fixedDelay(seconds: 10)
    /// About what iOS does in the foreground (30 s).
    public static let iOSLike = ExitRule.fixedDelay(seconds: 30)
}

/// The adaptive exit rule, after TCP's retransmission timer (Jacobson, RFC 6298) tuned for a
/// much lower false-alarm rate.
///
/// For each beacon the engine keeps a smoothed mean `m` of the gaps between packets and a
/// smoothed mean deviation `v` of the gaps from `m`. The deviation rises quickly
/// (`deviationRise`) and falls slowly (`deviationFall`), so one burst of regular packets does not
/// make an irregular beacon look regular. A beacon is gone after a silence longer than
///
///     timeout = clamp(m + k·v, floor, ceiling)
///
/// - A beacon heard 10 times a second has m ≈ 0.1 s and v ≈ 0, so the floor (1 s) applies:
///   it is gone after 1 s of silence.
/// - A beacon at the edge of range, heard on 10 % of its 10 Hz packets, has gaps that are
///   roughly geometric (m ≈ 1 s, v ≈ 0.7 s), so the timeout is about 10–15 s; a 15 s silence
///   happens with probability 0.9^150 ≈ 1.4·10⁻⁷ per gap.
/// - A beacon heard only once waits for the ceiling (30 s): one packet says nothing of its rate.
/// The first gap after a (re-)entry starts the statistics with `v = gap`, the pessimistic
/// assumption of exponential gaps.
public struct AdaptiveExitParameters: Sendable, Hashable {
    public var floor: Double
    public var ceiling: Double
    /// k: how many mean deviations of silence beyond the mean gap mean "gone".
    public var deviationMultiplier: Double
    /// Weight of a new gap in the mean gap.
    public var meanSmoothing: Double
    /// Weight of a new deviation when it is larger than the current one.
    public var deviationRise: Double
    /// Weight of a new deviation when it is smaller than the current one.
    public var deviationFall: Double

    public init(floor: Double = 1, ceiling: Double = 30, deviationMultiplier: Double = 14,
                meanSmoothing: Double = 1.0 / 16, deviationRise: Double = 1.0 / 4,
                deviationFall: Double = 1.0 / 64) {
        self.floor = floor
        self.ceiling = max(floor, ceiling)
        self.deviationMultiplier = deviationMultiplier
        self.meanSmoothing = meanSmoothing
        self.deviationRise = deviationRise
        self.deviationFall = deviationFall
    }

    public static let `default` = AdaptiveExitParameters()
}

/// One beacon's reception pattern: 12 bytes, updated per packet with no allocation.
public struct ReceptionStatistics: Sendable, Hashable {
    /// Smoothed gap between packets, seconds; NaN before the first gap.
    public private(set) var meanGap: Float = .nan
    /// Smoothed mean deviation of the gaps, seconds.
    public private(set) var gapDeviation: Float = 0

    public init() {}

    /// Restores saved statistics (see ``EngineCheckpoint``).
    init(meanGap: Float, gapDeviation: Float) {
        self.meanGap = meanGap
        self.gapDeviation = gapDeviation
    }

    @inline(__always)
    public mutating func addGap(_ gap: Float, parameters p: AdaptiveExitParameters) {
        if meanGap.isNaN {
            meanGap = gap
            gapDeviation = gap
            return
        }
        let deviation = abs(gap - meanGap)
        meanGap += Float(p.meanSmoothing) * (gap - meanGap)
        let weight = deviation > gapDeviation ? Float(p.deviationRise) : Float(p.deviationFall)
        gapDeviation += weight * (deviation - gapDeviation)
    }

    /// Forgets the pattern (after an exit), so the absence is not mistaken for a gap.
    public mutating func reset() { self = ReceptionStatistics() }

    /// Seconds of silence after which the beacon is gone.
    @inline(__always)
    public func timeout(parameters p: AdaptiveExitParameters) -> Double {
        if meanGap.isNaN { return p.ceiling }
        let raw = Double(meanGap) + p.deviationMultiplier * Double(gapDeviation)
        return min(p.ceiling, max(p.floor, raw))
    }
}
