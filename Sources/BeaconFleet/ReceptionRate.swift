import Foundation

/// Packets per second on one link, forgetting the past exponentially so that a changed beacon
/// is relearnt. It only advances when a packet arrives: a beacon that falls silent keeps the rate
/// it had, which is what the missing check needs to judge the silence.
struct ReceptionRate: Sendable, Hashable {
    private(set) var decayedCount = 0.0
    private(set) var decayedSpan = 0.0
    private(set) var packets = 0
    private(set) var firstHeard: Double
    private(set) var lastHeard: Double

    init(firstHeard: Double) {
        self.firstHeard = firstHeard
        self.lastHeard = firstHeard
    }

    /// Counts a packet. `gapStart` is when this link could last have been heard: the later of
    /// the previous packet and the gateway's return from an outage, so outages do not lower the rate.
    mutating func count(at time: Double, gapStart: Double, memory: Double, longestCountedGap: Double) {
        packets += 1
        let start = max(lastHeard, gapStart)
        let gap = time - start
        if gap > 0 && gap <= longestCountedGap {
            let decay = exp(-gap / memory)
            decayedCount *= decay
            decayedSpan = decayedSpan * decay + memory * (1 - decay)
        }
        decayedCount += 1
        if time > lastHeard { lastHeard = time }
    }

    /// Packets per second; 0 until there is a span to divide by.
    var perSecond: Double {
        decayedSpan > 0 ? max(0, decayedCount - 1) / decayedSpan : 0
    }
}
