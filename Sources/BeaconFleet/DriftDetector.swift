import Foundation

/// Watches one fixed link's RSSI for a lasting shift: minute means, a learnt normal level, and a
/// two-sided CUSUM with reference half the shift worth reporting. Noise of a few dB between
/// packets averages out in a minute; a moved or obstructed beacon shifts every minute the same way.
struct DriftShift: Sendable, Hashable {
    var since: Double
    var dB: Double
}

struct DriftDetector: Sendable {
    enum Phase: Sendable, Hashable {
        case learning([Float])
        /// `spread`: the learnt standard deviation of the minute means (from their MAD).
        case watching(normal: Double, spread: Double)
    }

    /// Minutes with fewer packets are too noisy to move the sums: a link heard a few times a
    /// minute says little about its level, and drift is for fixed links heard often.
    static let packetsPerMinute = 10

    private(set) var phase: Phase = .learning([])
    private var minuteStart: Double?
    private var minuteSum = 0.0
    private var minuteCount = 0
    private var upper = 0.0
    private var lower = 0.0
    /// When the running sums were last zero: the change point once a shift is confirmed.
    private var upperStart: Double = 0
    private var lowerStart: Double = 0
    private(set) var recentMinuteMean: Double?
    /// Set while a shift is confirmed: since when, and by how much.
    private(set) var shift: DriftShift?
    /// Reception falling away (a beacon moved out of the gateway's range hears fewer packets, not
    /// weaker ones): see ``ReceptionDrop``.
    private(set) var reception = ReceptionDrop()

    var normalLevel: Double? {
        if case .watching(let normal, _) = phase { return normal }
        return nil
    }

    /// `listeningSince`: when the gateway last came back from an outage; minutes before it are
    /// not counted as minutes without packets.
    mutating func record(rssi: Int8, at time: Double, listeningSince: Double = -.infinity, settings: FleetSettings) {
        guard let start = minuteStart else {
            minuteStart = time
            minuteSum = Double(rssi)
            minuteCount = 1
            return
        }
        if time - start < 60 {
            minuteSum += Double(rssi)
            minuteCount += 1
            return
        }
        // The minutes between the last packet's minute and this one heard nothing, unless the
        // gateway was down then.
        let silentFrom = max(start + 60, listeningSince)
        let silentMinutes = silentFrom < time ? Int(min(10_000, ((time - silentFrom) / 60).rounded(.down))) : 0
        if case .watching = phase {
            reception.closeMinutes(count: minuteCount, silentMinutes: silentMinutes, at: start, settings: settings)
        } else {
            reception.learn(count: minuteCount, silentMinutes: silentMinutes)
        }
        if minuteCount >= Self.packetsPerMinute { closeMinute(mean: minuteSum / Double(minuteCount), at: start, settings: settings) }
        minuteStart = time
        minuteSum = Double(rssi)
        minuteCount = 1
    }

    private mutating func closeMinute(mean: Double, at time: Double, settings: FleetSettings) {
        recentMinuteMean = mean
        switch phase {
        case .learning(var means):
            means.append(Float(mean))
            if means.count >= settings.driftLearningMinutes {
                let sorted = means.sorted()
                let median = Double(sorted[sorted.count / 2])
                let deviations = means.map { abs(Double($0) - median) }.sorted()
                phase = .watching(normal: median, spread: 1.4826 * deviations[deviations.count / 2])
                upperStart = time
                lowerStart = time
            } else {
                phase = .learning(means)
            }
        case .watching(let normal, let spread):
            // Noisier links need a larger reference and decision level, or their noise alone
            // would cross it: at least 2 and 10 standard deviations of a minute mean.
            let reference = max(settings.driftShift / 2, 2 * spread)
            let decision = max(settings.driftDecision, 10 * spread)
            upper = max(0, upper + mean - normal - reference)
            lower = max(0, lower + normal - mean - reference)
            if upper == 0 { upperStart = time }
            if lower == 0 { lowerStart = time }
            if let current = shift {
                if abs(mean - normal) < reference && upper == 0 && lower == 0 {
                    shift = nil
                } else if time - current.since >= settings.driftAcceptAfter {
                    phase = .watching(normal: mean, spread: spread)
                    shift = nil
                    upper = 0
                    lower = 0
                } else {
                    shift = DriftShift(since: current.since, dB: mean - normal)
                }
            } else if upper > decision {
                shift = DriftShift(since: upperStart, dB: mean - normal)
            } else if lower > decision {
                shift = DriftShift(since: lowerStart, dB: mean - normal)
            }
        }
    }
}
