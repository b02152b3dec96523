import Foundation

/// Watches one fixed link's packets per minute for a lasting fall. A beacon moved out of a
/// gateway's range is mostly not heard there any more: the packets that still arrive are few
/// (too few for ``DriftDetector``'s minute means) and hardly weaker than before, because the
/// weak ones fall under the sensitivity. So the count is watched too: a one-sided CUSUM of
/// `0.7·normal − count` per minute, where `normal` is the mean count over the drift detector's
/// learning minutes (all of them, quiet ones included), raises once the sum passes 5 normal
/// minutes: a link falling silent is found in about 7 minutes, one falling to half in about 25.
/// A link at its normal Poisson count drifts down by 0.3·normal a minute with a spread of
/// √normal, so crossing 5·normal by chance has a probability of about exp(−3·normal) per
/// excursion. Minutes are closed when a packet arrives, so a beacon that stops altogether is
/// left to the missing check, and minutes while the gateway was down count for nothing.
struct ReceptionDrop: Sendable {
    private var learntPackets = 0
    private var learntMinutes = 0
    private(set) var normal: Double?
    private var sum = 0.0
    private var sumStart = 0.0
    private var recentCounts: [Int] = []
    /// Set while a fall is confirmed: since when, the normal and the recent packets per minute.
    private(set) var fall: (since: Double, normal: Double, recent: Double)?

    /// The share of its normal count below which a link's minutes add to the sum.
    static let fallFraction = 0.7
    /// The sum, in normal minutes, that confirms a fall.
    static let decisionMinutes = 5.0

    mutating func learn(count: Int, silentMinutes: Int) {
        guard normal == nil else { return }
        learntPackets += count
        learntMinutes += 1 + silentMinutes
    }

    /// A minute with `count` packets starting at `time`, followed by `silentMinutes` without any.
    mutating func closeMinutes(count: Int, silentMinutes: Int, at time: Double, settings: FleetSettings) {
        if normal == nil {
            guard learntMinutes > 0 else { return }
            normal = Double(learntPackets) / Double(learntMinutes)
            sumStart = time
        }
        guard let normal else { return }
        let decision = Self.decisionMinutes * normal
        for (index, minuteCount) in ([count] + Array(repeating: 0, count: min(silentMinutes, 60))).enumerated() {
            let minute = time + 60 * Double(index)
            sum = max(0, sum + Self.fallFraction * normal - Double(minuteCount))
            if sum == 0 { sumStart = minute + 60 }
            recentCounts.append(minuteCount)
            if recentCounts.count > 10 { recentCounts.removeFirst() }
        }
        let recent = Double(recentCounts.reduce(0, +)) / Double(max(1, recentCounts.count))
        if let current = fall {
            if sum == 0 {
                fall = nil
            } else if time - current.since >= settings.driftAcceptAfter {
                // A fall that lasts a day is the link's new normal (the beacon was moved on purpose).
                self.normal = max(recent, 1)
                fall = nil
                sum = 0
            } else {
                fall = (current.since, normal, recent)
            }
        } else if sum > decision {
            fall = (sumStart, normal, recent)
        }
    }
}
