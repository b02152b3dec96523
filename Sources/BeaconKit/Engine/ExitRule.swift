/// When a silent beacon counts as gone.
public enum ExitRule: Sendable, Hashable {
    /// Exit after silence longer than the beacon's own recent reception pattern allows; see
    /// ``AdaptiveExitParameters``.
    case adaptive(AdaptiveExitParameters)
    /// Exit after a fixed silence, whatever the beacon's rate.
    case fixedDelay(seconds: Double)
    /// Enter on strong or confirmed evidence and exit after the silence that the beacon's
    /// reception rate, signal margin and dropouts allow at a chosen false-exit rate; see
    /// ``EvidenceExitParameters``.
    case evidence(EvidenceExitParameters)

    public static let `default` = ExitRule.evidence(.default)
    /// The adaptive rule with its defaults (the default rule before the evidence rule).
    public static let adaptiveDefault = ExitRule.adaptive(.default)
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
/// The first gap ever observed starts the statistics with `v = gap`, the pessimistic
/// assumption of exponential gaps.
/// - A beacon that comes back within the ceiling after an exit was only dropped out (a body, a
///   shadowed spot): the timeout then stays at least `dropoutMargin` × that silence, a memory
///   that fades over `dropoutMemory` seconds of reception. That is how the rule stops flapping
///   for a walking receiver. A beacon back after longer than the ceiling starts afresh.
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
    /// After a dropout (an exit undone by a return within the ceiling), the timeout stays at
    /// least this many times that silence...
    public var dropoutMargin: Double
    /// ...while the memory of it fades with this time constant, in seconds of reception.
    public var dropoutMemory: Double

    public init(floor: Double = 1, ceiling: Double = 30, deviationMultiplier: Double = 14,
                meanSmoothing: Double = 1.0 / 16, deviationRise: Double = 1.0 / 4,
                deviationFall: Double = 1.0 / 64, dropoutMargin: Double = 1.5, dropoutMemory: Double = 120) {
        self.floor = floor
        self.ceiling = max(floor, ceiling)
        self.deviationMultiplier = deviationMultiplier
        self.meanSmoothing = meanSmoothing
        self.deviationRise = deviationRise
        self.deviationFall = deviationFall
        self.dropoutMargin = dropoutMargin
        self.dropoutMemory = max(1, dropoutMemory)
    }

    public static let `default` = AdaptiveExitParameters()
}

/// One beacon's reception pattern: 12 bytes, updated per packet with no allocation.
public struct ReceptionStatistics: Sendable, Hashable {
    /// Smoothed gap between packets, seconds; NaN before the first gap.
    public private(set) var meanGap: Float = .nan
    /// Smoothed mean deviation of the gaps, seconds.
    public private(set) var gapDeviation: Float = 0
    /// The longest recent dropout, fading as packets arrive; seconds.
    public private(set) var recentDropout: Float = 0

    public init() {}

    /// Restores saved statistics (see ``EngineCheckpoint``).
    init(meanGap: Float, gapDeviation: Float, recentDropout: Float) {
        self.meanGap = meanGap
        self.gapDeviation = gapDeviation
        self.recentDropout = recentDropout
    }

    /// The beacon came back `silence` seconds after it was declared gone: the exit was a
    /// dropout (a body, a shadowed spot), and the same kind of silence must not end the next
    /// visit. The gap statistics stay those of reception.
    public mutating func learnDropout(_ silence: Float) {
        recentDropout = max(recentDropout, silence)
    }

    @inline(__always)
    public mutating func addGap(_ gap: Float, parameters p: AdaptiveExitParameters) {
        if recentDropout > 0 {
            // First-order fade: exact enough for gaps much shorter than the memory.
            recentDropout = max(0, recentDropout * (1 - gap / Float(p.dropoutMemory)))
        }
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

    /// Forgets the pattern, for a beacon back after longer than the ceiling: that absence was a
    /// real departure, not a gap.
    public mutating func reset() { self = ReceptionStatistics() }

    /// Whether any gap has been observed since the last reset.
    public var hasPattern: Bool { !meanGap.isNaN }

    /// Seconds of silence after which the beacon is gone.
    @inline(__always)
    public func timeout(parameters p: AdaptiveExitParameters) -> Double {
        if meanGap.isNaN { return p.ceiling }
        let raw = Double(meanGap) + p.deviationMultiplier * Double(gapDeviation)
        let learned = p.dropoutMargin * Double(recentDropout)
        return min(p.ceiling, max(p.floor, raw, learned))
    }
}
