/// How many beacons an engine keeps, for a consumer that hears beacons it does not choose (a
/// server's gateway in a busy place, or a transmitter sending random minors).
public struct BeaconRetention: Sendable, Hashable {
    /// The most beacons tracked at once; nil for no limit. At the limit a new beacon takes the
    /// place of the longest-silent absent ones (an eighth of the limit is freed at once, so the
    /// search is rare); when every tracked beacon is present, the new one is not tracked.
    public var limit: Int?
    /// Forget absent beacons once they have been silent longer than the engine remembers
    /// anything about them (``BeaconEngine/forgetAfter``).
    public var forgetsSilentBeacons: Bool

    public init(limit: Int? = nil, forgetsSilentBeacons: Bool = false) {
        self.limit = limit.map { Swift.max(1, $0) }
        self.forgetsSilentBeacons = forgetsSilentBeacons
    }

    public static let unbounded = BeaconRetention()
}

/// A beacon's own enter or exit, reported with ``BeaconEngine/followsEveryBeacon``.
public struct BeaconPresenceChange: Sendable, Hashable {
    public enum Transition: String, Sendable, Hashable, Codable { case enter, exit }
    public var identity: BeaconIdentity
    public var transition: Transition
    /// As a region event's: the packet that completed the entry, or when the silence reached the exit timeout.
    public var time: Double
}

/// What the engine saw per beacon since the last ``BeaconEngine/takeActivity()``.
public struct BeaconActivity: Sendable, Hashable {
    /// Enters and exits in the order they happened.
    public var presence: [BeaconPresenceChange] = []
    /// Each closed cycle's reading of every beacon heard in it, cycle by cycle.
    public var readings: [RangedBeacon] = []
}

/// The beacon records to save since the last ``BeaconEngine/takeChanges()``: a checkpoint's
/// delta, as long as the beacons a batch touched rather than all the engine tracks.
public struct EngineChanges: Sendable, Hashable {
    /// Records created or changed, in their checkpoint form.
    public var changed: [EngineCheckpoint.Beacon] = []
    /// Beacons the engine forgot (delete these before saving `changed`: a beacon can be
    /// forgotten and heard again between two takes).
    public var forgotten: [BeaconIdentity] = []

    public init() {}
}

/// Counts of the engine's heavier work, to show it does not grow with the beacons heard.
public struct EngineWork: Sendable, Hashable {
    /// Times every beacon was matched against every region (only when regions change).
    public var fullMatchRebuilds = 0
    public var beaconsForgotten = 0
    /// Sightings dropped because the engine was full of present beacons.
    public var untrackedSightings = 0
}

extension BeaconEngine {
    /// Seconds of silence after which an absent beacon's record holds nothing the engine would
    /// still use: past the longest exit timeout its entry evidence has lapsed and its reception
    /// pattern would be reset on return, and past the tracking age it is no longer ranged.
    public var forgetAfter: Double {
        Swift.max(longestExitTimeout, configuration.trackingAge) + configuration.rangingCycle
    }

    /// Takes the per-beacon enters, exits and readings gathered since the last call.
    public mutating func takeActivity() -> BeaconActivity {
        defer { pendingActivity = BeaconActivity() }
        return pendingActivity
    }

    /// Takes the records changed and the beacons forgotten since the last call.
    public mutating func takeChanges() -> EngineChanges {
        var changes = EngineChanges()
        changes.changed.reserveCapacity(changedIndices.count)
        for index in changedIndices {
            beacons[Int(index)].isChanged = false
            changes.changed.append(savedBeacon(Int(index)))
        }
        changedIndices.removeAll(keepingCapacity: true)
        changes.forgotten = forgottenSinceTaken
        forgottenSinceTaken.removeAll()
        return changes
    }

    /// How many records ``takeChanges()`` would return now.
    public var pendingChangeCount: Int { changedIndices.count }

    mutating func noteChange(_ index: Int) {
        guard !beacons[index].isChanged else { return }
        beacons[index].isChanged = true
        changedIndices.append(Int32(index))
    }

    /// ``noteChange(_:)`` for a record that is out of `self` for an in-place update.
    @inline(__always)
    mutating func noteChange(_ index: Int, of record: inout TrackedBeacon) {
        guard !record.isChanged else { return }
        record.isChanged = true
        changedIndices.append(Int32(index))
    }

    /// Forgets absent beacons silent past ``forgetAfter``, at most every quarter of that time.
    mutating func forgetSilentBeaconsIfDue() {
        guard retention.forgetsSilentBeacons, now >= nextForgetSweep else { return }
        let silence = forgetAfter
        nextForgetSweep = now + Swift.max(silence / 4, configuration.rangingCycle)
        forget(absentSilentBefore: now - silence, keepingAtMost: nil)
    }

    /// At the limit: forgets what has aged out, then the longest-silent absent beacons until an
    /// eighth of the limit is free.
    mutating func makeRoom(below limit: Int) {
        let cutoff = retention.forgetsSilentBeacons ? now - forgetAfter : -.infinity
        forget(absentSilentBefore: cutoff, keepingAtMost: limit - Swift.max(1, limit / 8))
    }

    private mutating func forget(absentSilentBefore cutoff: Double, keepingAtMost target: Int?) {
        var doomed = [Bool](repeating: false, count: beacons.count)
        var remaining = beacons.count
        var candidates: [(lastHeard: Double, index: Int)] = []
        for index in beacons.indices where !beacons[index].isPresent {
            if beacons[index].lastHeard < cutoff {
                doomed[index] = true
                remaining -= 1
            } else if target != nil {
                candidates.append((beacons[index].lastHeard, index))
            }
        }
        if let target, remaining > target {
            candidates.sort { ($0.lastHeard, $0.index) < ($1.lastHeard, $1.index) }
            for candidate in candidates.prefix(remaining - target) {
                doomed[candidate.index] = true
                remaining -= 1
            }
        }
        if remaining < beacons.count { compact(removing: doomed) }
    }

    /// Removes the doomed records in one pass, keeping the others in order with their region
    /// matches (copied, not recomputed).
    private mutating func compact(removing doomed: [Bool]) {
        layoutGeneration &+= 1
        var pool = ContiguousArray<UInt32>()
        pool.reserveCapacity(matchPool.count)
        changedIndices.removeAll(keepingCapacity: true)
        var kept = 0
        for index in beacons.indices {
            let identity = identities[index]
            if doomed[index] {
                indexByIdentity.remove(IdentityKey(identity))
                forgottenSinceTaken.append(identity)
                work.beaconsForgotten += 1
                continue
            }
            var record = beacons[index]
            let monitorStart = Int(record.monitorMatchStart), rangeStart = Int(record.rangeMatchStart)
            record.monitorMatchStart = UInt32(pool.count)
            pool.append(contentsOf: matchPool[monitorStart..<(monitorStart + Int(record.monitorMatchCount))])
            record.rangeMatchStart = UInt32(pool.count)
            pool.append(contentsOf: matchPool[rangeStart..<(rangeStart + Int(record.rangeMatchCount))])
            beacons[kept] = record
            identities[kept] = identity
            if !windows.isEmpty { windows[kept] = windows[index] }
            if kept != index { indexByIdentity.set(Int32(kept), for: IdentityKey(identity)) }
            if record.isChanged { changedIndices.append(Int32(kept)) }
            kept += 1
        }
        beacons.removeLast(beacons.count - kept)
        identities.removeLast(identities.count - kept)
        if !windows.isEmpty { windows.removeLast(windows.count - kept) }
        matchPool = pool
    }
}
