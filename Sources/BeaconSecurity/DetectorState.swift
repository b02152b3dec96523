import BeaconKit

/// A receiver's clock as the server sees it: the offset it had when first heard, and strikes
/// against it.
struct ReceiverClock: Sendable {
    enum Verdict {
        case leads(Double)
        case stale(Double)
        case wandered(from: Double, to: Double)
    }

    private var learned = 0
    private var offsetSum = 0.0
    private var baseline: Double?
    private var strikes = StrikeCounter()

    mutating func judge(offset: Double, at time: Double, settings: SecuritySettings) -> Verdict? {
        let verdict: Verdict?
        if offset < -settings.clockLeadTolerance {
            verdict = .leads(-offset)
        } else if offset > settings.maximumSightingAge {
            verdict = .stale(offset)
        } else if let baseline, abs(offset - baseline) > settings.clockJumpTolerance {
            verdict = .wandered(from: baseline, to: offset)
        } else {
            if baseline == nil {
                learned += 1
                offsetSum += offset
                if learned >= settings.clockLearningSightings { baseline = offsetSum / Double(learned) }
            }
            return nil
        }
        return strikes.strike(at: time, limit: settings.strikesToAlert, window: settings.strikeWindow) ? verdict : nil
    }
}

/// Where an identity was last heard: per receiver, the tightest "within this many metres of this
/// gateway" its sightings allow, and strikes against it.
struct IdentityTrace: Sendable {
    /// At most this many receivers' anchors are kept: enough to catch two places at once.
    static let anchorLimit = 4

    var anchors: [TraceAnchor] = []
    var strikes = StrikeCounter()
    var firstAddress: BluetoothAddress?

    struct Conflict {
        var earlier: TraceAnchor
        var elapsed: Double
        var gap: Double
    }

    /// Adds a sighting's anchor; returns the conflict that raised an alert, if one did.
    mutating func add(_ anchor: TraceAnchor, settings: SecuritySettings) -> Conflict? {
        let speed = settings.walkingSpeed
        anchors.removeAll { anchor.time - $0.time > settings.traceMemory }
        var worst: Conflict?
        for earlier in anchors where earlier.receiver != anchor.receiver {
            let elapsed = Swift.max(0, anchor.time - earlier.time)
            let gap = earlier.position.distance(to: anchor.position) - earlier.bound - anchor.bound
            if gap > speed * elapsed, gap - speed * elapsed > (worst.map { $0.gap - speed * $0.elapsed } ?? 0) {
                worst = Conflict(earlier: earlier, elapsed: elapsed, gap: gap)
            }
        }
        if let index = anchors.firstIndex(where: { $0.receiver == anchor.receiver }) {
            // Keep whichever constrains the identity more now: an older, tighter bound grows at walking speed.
            let kept = anchors[index]
            if kept.bound + speed * (anchor.time - kept.time) > anchor.bound { anchors[index] = anchor }
        } else {
            if anchors.count >= Self.anchorLimit, let oldest = anchors.indices.min(by: { anchors[$0].time < anchors[$1].time }) {
                anchors.remove(at: oldest)
            }
            anchors.append(anchor)
        }
        guard let worst else { return nil }
        return strikes.strike(at: anchor.time, limit: settings.strikesToAlert, window: settings.strikeWindow) ? worst : nil
    }
}

/// "Within `bound` metres of `position` at `time`", from one receiver's sighting.
struct TraceAnchor: Sendable, Hashable {
    var receiver: String
    var position: Position3D
    var time: Double
    var bound: Double
}

/// A fixed beacon's RSSI at one fixed gateway: a long and a recent running mean.
struct SignalBaseline: Sendable {
    private var count = 0
    private var long = 0.0
    private var recent = 0.0

    /// Adds a sample; returns both means when the recent one rose above the long one by more
    /// than the threshold. Only a rise is a copy's mark: a second transmitter adds power, while
    /// a fall (a weaker battery, an obstacle, a copy that stopped) is not a spoof.
    mutating func add(_ rssi: Double, settings: SecuritySettings) -> (recent: Double, long: Double)? {
        count += 1
        if count <= settings.rssiLearningSightings {
            long += (rssi - long) / Double(count)
            recent = count == 1 ? rssi : recent + settings.rssiRecentWeight * (rssi - recent)
            return nil
        }
        long += settings.rssiLongWeight * (rssi - long)
        recent += settings.rssiRecentWeight * (rssi - recent)
        return recent - long > settings.rssiShiftThreshold ? (recent, long) : nil
    }
}
