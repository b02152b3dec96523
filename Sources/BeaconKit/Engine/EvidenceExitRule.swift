import Foundation

/// The evidence rule: entry and exit decided from everything one receiver knows about a beacon,
/// sized to a chosen false-exit rate instead of a fixed or gap-shaped delay.
///
/// **Exit.** While a beacon is present, its packets are modelled as advertising events every
/// `P` seconds (the advertising period: the shortest gap seen, never more than
/// `advertisingPeriod`), each received independently with an unknown probability `p`. What the
/// rule knows of `p` is the `n` gaps it has seen (their smoothed mean `m`: `n·(m/P − 1)` missed
/// events, plus `missPrior` imagined ones, so that a few back-to-back packets do not prove a
/// beacon heard on every event), and it asks for the silence that a present beacon exceeds with
/// probability at most `δ = ε·m/3600` per gap (there are `3600/m` gaps an hour), *predicted from
/// those `n` gaps*, not from a rate taken as known:
///
///     model = P · (1 + n·(δ^(−1/n) − 1) / θ),   θ = −ln(1 − p̂),  p̂ = n / (n + misses)
///
/// This is the predictive bound of a Gamma posterior on the per-event hazard θ (exact for
/// exponential gaps: the next gap over the mean of `n` gaps is F-distributed, so the bound holds at
/// δ for every `n`). For large `n` it is `P·(1 + ln(1/δ)/θ)`, for a weak beacon Poisson's bound
/// `T* = ln(3600·λ/ε)/λ` with `λ = 1/m`; for few gaps it is much longer (one gap says next to
/// nothing of a rate: the ceiling applies). `n` is the smoothing's effective count (at most
/// `2/gapSmoothing − 1`). A beacon back after a departure starts afresh unless `rateMemory` is
/// set, when it keeps what it knew of its link with the count scaled by
/// `exp(−absence/rateMemory)`.
///
/// Three guards cover what the independent-loss model misses:
/// - the recent tail: at least `tailMargin` × the longest gap seen lately (the memory fades over
///   `gapMemory` seconds of reception), for correlated losses such as a scanner parked on a bad
///   channel;
/// - the beacon's dropouts: a beacon back within `longestDropout` seconds after an exit was only
///   dropped out, and the timeout stays at least `dropoutMargin` × that silence (fading over
///   `dropoutMemory` seconds of reception), as in the adaptive rule;
/// - the receiver's dropouts: a beacon that falls silent while it was *strong* (its recent RSSI
///   at least `strongMargin` dB above `sensitivity`) cannot have faded out of range; it was
///   blocked (a body, a door). When such a dropout ends in a quick return, the receiver learns
///   it (one memory per engine, fading over `receiverDropoutMemory` seconds), and every strong
///   beacon of that receiver keeps a timeout of at least `dropoutMargin` × that silence. A
///   fixed gateway never learns one and exits at the model's speed; a phone in a pocket learns
///   it on its first flap and stops flapping for all its beacons.
///
/// **Entry.** A single packet is weak evidence when it is heard near the sensitivity (shadowing
/// and fading lift single packets out of the floor far beyond the range where the beacon is
/// really heard). A packet at least `strongMargin` dB above the sensitivity enters at once; a
/// weaker one enters only with `confirmationPackets` packets, each within `confirmationWindow`
/// seconds of the previous one. A beacon that entered on one strong packet and was not heard
/// again waits `unconfirmedTimeout` (one packet says nothing of its rate). Packets without RSSI
/// give no strength to judge: they enter on the first packet, as the fixed rules do.
public struct EvidenceExitParameters: Sendable, Hashable {
    /// ε: false exits per beacon-hour the model allows.
    public var falseExitRate: Double
    /// Shortest timeout, seconds.
    public var floor: Double
    /// Longest timeout, seconds.
    public var ceiling: Double
    /// The longest advertising period assumed before a shorter gap is seen: twice the iBeacon 100 ms,
    /// so that 5–10 Hz beacons are recognised from their first gap while a weak beacon whose first
    /// gaps are long is still treated as one heard on few of many events.
    public var advertisingPeriod: Double
    /// Weight of a new gap in the smoothed gap `m` (slow: the rate sets the timeout's size);
    /// the first gaps are averaged equally until their weight falls to this.
    public var gapSmoothing: Double
    /// Missed events imagined beside those the gaps imply: with none, a beacon whose first gaps
    /// are all one period long would look heard on every event, and exit at the floor.
    public var missPrior: Double
    /// After a departure (a silence longer than `longestDropout`), the rate learnt before keeps
    /// the weight of `n·exp(−absence/rateMemory)` gaps; 0 (the default) starts afresh. A fixed
    /// gateway gains from a memory (a restarted beacon comes back at the rate it left with); a
    /// walker loses (it comes back elsewhere), and walkers decided the default
    /// (docs/evaluation.md).
    public var rateMemory: Double
    /// The timeout is at least this × the longest recent gap...
    public var tailMargin: Double
    /// ...whose memory fades over this many seconds of reception.
    public var gapMemory: Double
    /// After a dropout the timeout stays at least this × that silence.
    public var dropoutMargin: Double
    /// Fading of a beacon's own dropout memory, seconds of reception.
    public var dropoutMemory: Double
    /// Silences longer than this, even if followed by a return, were departures, not dropouts.
    public var longestDropout: Double
    /// Fading of the receiver's dropout memory, seconds.
    public var receiverDropoutMemory: Double
    /// The receiver's sensitivity, dBm: RSSI is judged by its margin above this.
    public var sensitivity: Double
    /// A beacon this many dB above the sensitivity is strong: it enters on one packet, and its
    /// silence is a blockage rather than a departure.
    public var strongMargin: Double
    /// Weight of a new RSSI in the recent signal margin.
    public var marginSmoothing: Double
    /// Packets a weak beacon needs before it enters.
    public var confirmationPackets: Int
    /// Seconds within which each confirming packet must follow the previous one.
    public var confirmationWindow: Double
    /// Timeout of a beacon present on a single strong packet.
    public var unconfirmedTimeout: Double

    public init(falseExitRate: Double = 1e-4, floor: Double = 1, ceiling: Double = 60, advertisingPeriod: Double = 0.2,
                gapSmoothing: Double = 1.0 / 128, missPrior: Double = 1, rateMemory: Double = 0, tailMargin: Double = 1.5, gapMemory: Double = 300,
                dropoutMargin: Double = 1.5, dropoutMemory: Double = 120, longestDropout: Double = 8,
                receiverDropoutMemory: Double = 600, sensitivity: Double = -100, strongMargin: Double = 12,
                marginSmoothing: Double = 1.0 / 4, confirmationPackets: Int = 2, confirmationWindow: Double = 10,
                unconfirmedTimeout: Double = 10) {
        self.falseExitRate = min(1, max(1e-12, falseExitRate))
        self.floor = max(0, floor)
        self.ceiling = max(self.floor, ceiling)
        self.advertisingPeriod = max(1e-3, advertisingPeriod)
        self.gapSmoothing = min(1, max(1e-4, gapSmoothing))
        self.missPrior = max(1e-3, missPrior)
        self.rateMemory = max(0, rateMemory)
        self.tailMargin = max(0, tailMargin)
        self.gapMemory = max(1, gapMemory)
        self.dropoutMargin = max(0, dropoutMargin)
        self.dropoutMemory = max(1, dropoutMemory)
        self.longestDropout = max(0, longestDropout)
        self.receiverDropoutMemory = max(1, receiverDropoutMemory)
        self.sensitivity = sensitivity
        self.strongMargin = strongMargin
        self.marginSmoothing = min(1, max(1e-4, marginSmoothing))
        self.confirmationPackets = max(1, confirmationPackets)
        self.confirmationWindow = max(0, confirmationWindow)
        self.unconfirmedTimeout = max(self.floor, min(self.ceiling, unconfirmedTimeout))
    }

    public static let `default` = EvidenceExitParameters()

    /// The bound no rule can beat at false-exit rate `ε` for Poisson reception at `rate`
    /// packets/s: a gap longer than `T` happens with probability `e^(−λT)`, and there are
    /// `3600·λ` gaps an hour, so `T* = ln(3600·λ/ε)/λ`.
    public static func poissonBound(rate: Double, falseExitsPerHour epsilon: Double = 1e-4) -> Double {
        guard rate > 0, epsilon > 0 else { return .infinity }
        return log(3600 * rate / epsilon) / rate
    }
}

/// The parameters as the per-packet path reads them, converted once (``HotParameters``).
struct EvidenceHot: Sendable {
    var advertisingPeriod: Float, gapSmoothing: Float, gapMemory: Float, dropoutMemory: Float
    /// Beyond this many gaps 1/count is below `gapSmoothing`, so the smoothing weight needs no division.
    var equalWeightGaps: UInt16
    var sensitivity: Float, marginSmoothing: Float, strongMargin: Float
    var tailMargin: Float, dropoutMargin: Float, longestDropout: Double
    var falseExitRate: Double, floor: Double, ceiling: Double, unconfirmedTimeout: Double
    var missPrior: Double, rateMemory: Double, effectiveCountLimit: Double
    var confirmationWindow: Double, receiverDropoutMemory: Double
    var confirmationPackets: Int

    init(_ p: EvidenceExitParameters) {
        advertisingPeriod = Float(p.advertisingPeriod); gapSmoothing = Float(p.gapSmoothing)
        gapMemory = Float(p.gapMemory); dropoutMemory = Float(p.dropoutMemory)
        equalWeightGaps = UInt16(clamping: Int((1 / Float(p.gapSmoothing)).rounded(.down)) + 1)
        sensitivity = Float(p.sensitivity); marginSmoothing = Float(p.marginSmoothing)
        strongMargin = Float(p.strongMargin)
        missPrior = p.missPrior; rateMemory = p.rateMemory; effectiveCountLimit = 2 / p.gapSmoothing - 1
        tailMargin = Float(p.tailMargin); dropoutMargin = Float(p.dropoutMargin); longestDropout = p.longestDropout
        falseExitRate = p.falseExitRate; floor = p.floor; ceiling = p.ceiling; unconfirmedTimeout = p.unconfirmedTimeout
        confirmationWindow = p.confirmationWindow; receiverDropoutMemory = p.receiverDropoutMemory
        confirmationPackets = p.confirmationPackets
    }
}

/// What the evidence rule keeps per beacon beside ``ReceptionStatistics``: 28 bytes, updated
/// per packet with no allocation. The model's silence (two logarithms) is recomputed on each of
/// the first 64 gaps and then every 16th, as `m` moves by at most 1/128 of a gap per packet.
public struct PresenceEvidence: Sendable, Hashable {
    /// Slowly smoothed gap between packets, seconds; NaN before the first gap.
    public internal(set) var meanGap: Float = .nan
    /// The advertising period: the shortest gap seen (at most the assumed period).
    public internal(set) var period: Float = .nan
    /// The longest recent gap, fading as packets arrive.
    public internal(set) var longestGap: Float = 0
    /// Recent RSSI above the sensitivity, dB; NaN before an RSSI is known.
    public internal(set) var signalMargin: Float = .nan
    /// The longest recent dropout of this beacon, fading as packets arrive.
    public internal(set) var recentDropout: Float = 0
    /// Gaps averaged into `meanGap` (saturating).
    public internal(set) var gapCount: UInt16 = 0
    /// Gaps since the model's silence was last computed.
    var sinceRefresh: UInt8 = 0
    /// The model's silence as last computed, seconds; NaN when not yet computed.
    var model: Float = .nan

    public init() {}

    var hasPattern: Bool { !meanGap.isNaN }

    @inline(__always)
    mutating func addGap(_ gap: Float, parameters p: EvidenceHot) {
        if gapCount < UInt16.max { gapCount += 1 }
        if meanGap.isNaN {
            meanGap = gap
            period = gap < p.advertisingPeriod ? gap : p.advertisingPeriod
            longestGap = gap
        } else {
            let weight = gapCount <= p.equalWeightGaps ? Swift.max(1 / Float(gapCount), p.gapSmoothing) : p.gapSmoothing
            meanGap += weight * (gap - meanGap)
            if gap < period { period = gap }
            // First-order fades: exact enough for gaps much shorter than the memories.
            let fading = longestGap * Swift.max(0, 1 - gap / p.gapMemory)
            longestGap = gap > fading ? gap : fading
        }
        sinceRefresh &+= 1
        if gapCount <= 64 || sinceRefresh >= 16 || model.isNaN {
            model = Float(modelTimeout(p))
            sinceRefresh = 0
        }
        if recentDropout > 0 { recentDropout = Swift.max(0, recentDropout * (1 - gap / p.dropoutMemory)) }
    }

    @inline(__always)
    mutating func addRSSI(_ rssi: Int8, parameters p: EvidenceHot) {
        let margin = Float(rssi) - p.sensitivity
        signalMargin = signalMargin.isNaN ? margin : signalMargin + p.marginSmoothing * (margin - signalMargin)
    }

    /// Forgets the gaps (a beacon back after a real departure); the signal margin stays, as the
    /// latest knowledge of its strength.
    mutating func resetPattern() {
        meanGap = .nan
        period = .nan
        longestGap = 0
        recentDropout = 0
        gapCount = 0
        sinceRefresh = 0
        model = .nan
    }

    /// A beacon back after a departure of `absence` seconds: the link's rate is still the best
    /// guess, but it counts for fewer gaps the longer the beacon was away.
    mutating func ageAfterDeparture(_ absence: Double, parameters p: EvidenceHot) {
        let kept = p.rateMemory > 0 ? Swift.min(Double(gapCount), p.effectiveCountLimit) * exp(-absence / p.rateMemory) : 0
        guard kept >= 1 else {
            resetPattern()
            return
        }
        gapCount = UInt16(kept)
        recentDropout = 0
        model = Float(modelTimeout(p))
        sinceRefresh = 0
    }

    /// A silence that ended in a return, though the beacon had been counted gone: in hindsight
    /// it was one of the pair's gaps, and the longest of them, so the tail learns it too.
    mutating func learnDropout(_ silence: Float) {
        recentDropout = max(recentDropout, silence)
        longestGap = max(longestGap, silence)
    }

    func isStrong(_ p: EvidenceHot) -> Bool { !signalMargin.isNaN && signalMargin >= p.strongMargin }

    /// The silence implied by the false-exit rate and the gaps seen (see ``EvidenceExitParameters``).
    @inline(__always)
    func modelTimeout(_ p: EvidenceHot) -> Double {
        let n = Swift.max(1, Swift.min(Double(gapCount), p.effectiveCountLimit))
        let m = Double(meanGap)
        let period = Swift.min(Double(self.period), m)
        guard period > 0 else { return p.ceiling }
        let misses = n * (m / period - 1) + p.missPrior
        let hazard = log1p(n / misses)               // −ln(1 − p̂), p̂ = n / (n + misses)
        let perGap = p.falseExitRate * m / 3600
        let missedEvents = n * expm1(-log(perGap) / n) / hazard
        return Swift.min(p.ceiling * 2, period * (1 + missedEvents))
    }

    /// Seconds of silence after which the beacon is gone. `receiverDropout` is the receiver's
    /// faded dropout memory, applied to strong beacons.
    @inline(__always)
    public func timeout(parameters: EvidenceExitParameters, receiverDropout: Float = 0) -> Double {
        timeout(EvidenceHot(parameters), receiverDropout: receiverDropout)
    }

    @inline(__always)
    func timeout(_ p: EvidenceHot, receiverDropout: Float) -> Double {
        guard hasPattern else { return p.unconfirmedTimeout }
        var dropout = recentDropout
        if receiverDropout > dropout && isStrong(p) { dropout = receiverDropout }
        let guarded = Swift.max(model.isNaN ? modelTimeout(p) : Double(model), Double(p.tailMargin * longestGap), Double(p.dropoutMargin * dropout))
        return Swift.min(p.ceiling, Swift.max(p.floor, guarded))
    }
}

/// The receiver's own memory of dropouts of strong beacons (see ``EvidenceExitParameters``):
/// one per engine.
struct ReceiverDropoutMemory: Sendable, Hashable {
    var silence: Float = 0
    var learnedAt: Double = -.infinity

    func faded(at time: Double, memory: Double) -> Float {
        guard silence > 0, time.isFinite, learnedAt.isFinite else { return 0 }
        return silence * Float(exp(-Swift.max(0, time - learnedAt) / memory))
    }

    mutating func learn(_ dropout: Float, at time: Double, memory: Double) {
        let current = faded(at: time, memory: memory)
        if dropout >= current {
            silence = dropout
            learnedAt = time
        }
    }
}

extension BeaconEngine {
    /// The evidence rule's per-packet bookkeeping of the silence before this packet.
    // Transparent, not only always-inline: the optimizer kept it out of line and copied the
    // rule's 124 bytes to the stack for it on every packet.
    @_transparent
    static func notePresenceGap(_ record: inout TrackedBeacon, receiverDropout: inout ReceiverDropoutMemory,
                                sincePrevious: Double, at time: Double, rule: EvidenceHot) {
        if record.isPresent || record.evidence > 0 {
            record.presence.addGap(Float(sincePrevious), parameters: rule)
        } else if record.presence.hasPattern {
            // Back soon after an exit: in hindsight the exit was a dropout. Back later, it was a
            // departure, and what the rule knew of the link counts for less.
            if sincePrevious <= rule.longestDropout {
                record.presence.learnDropout(Float(sincePrevious))
                if record.presence.isStrong(rule) {
                    receiverDropout.learn(Float(sincePrevious), at: time, memory: rule.receiverDropoutMemory)
                }
            } else {
                record.presence.ageAfterDeparture(sincePrevious, parameters: rule)
            }
        }
    }

    /// Whether the packets so far are enough to enter: always for the other rules; for the
    /// evidence rule, a strong signal or enough confirming packets. Packets without RSSI (a
    /// controller that reports none) give nothing to judge, and enter as the fixed rules do.
    @inline(__always)
    static func hasEntryEvidence(_ record: TrackedBeacon, rule: PacketRule) -> Bool {
        guard rule.usesEvidence else { return true }
        let evidence = rule.evidenceHot
        return Int(record.evidence) >= evidence.confirmationPackets || record.presence.signalMargin.isNaN
            || record.presence.isStrong(evidence)
    }

    @inline(__always)
    static func evidenceTimeout(_ record: TrackedBeacon, rule: EvidenceHot, receiverDropout: ReceiverDropoutMemory, now: Double) -> Double {
        guard record.isPresent else { return rule.confirmationWindow }
        let learned = receiverDropout.silence > 0 && record.presence.isStrong(rule)
            ? receiverDropout.faded(at: now, memory: rule.receiverDropoutMemory) : 0
        return record.presence.timeout(rule, receiverDropout: learned)
    }
}
