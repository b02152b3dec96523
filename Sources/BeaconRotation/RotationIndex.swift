import BeaconKit
import Foundation

/// Finds which registered beacon a rotated identity belongs to in one dictionary lookup.
///
/// Built for a moment, it holds for each beacon the identities of the next and current periods
/// and of ``RotationPeriod/replayLookback`` past ones, so its size depends on the number of
/// beacons, not on how long they have rotated. Rebuild it at ``validUntil`` (the earliest
/// boundary of any beacon) or when a beacon's key changes.
public struct RotationIndex<BeaconID: Sendable & Hashable>: Sendable {
    public struct Entry: Sendable, Hashable {
        public var beacon: BeaconID
        public var period: Int64
        public var rotation: RotationPeriod
    }

    /// What a lookup found: the beacon, the period the identity belongs to, and the verdict.
    public struct Match: Sendable, Hashable {
        public var beacon: BeaconID
        public var period: Int64
        public var verdict: RotationVerdict
    }

    private var entries: [BeaconIdentity: Entry] = [:]
    public private(set) var builtAt: Double
    public private(set) var validUntil: Double

    public init(_ beacons: [(id: BeaconID, identity: RotatingIdentity)], at time: Double) {
        builtAt = time
        validUntil = .infinity
        for (id, rotating) in beacons {
            let current = rotating.period.number(at: time)
            validUntil = min(validUntil, rotating.nextChange(after: time))
            // Oldest first, so a collision between periods keeps the newest period's beacon.
            for number in (current - rotating.period.replayLookback)...(current + 1) {
                let identity = rotating.identity(forPeriod: number)
                if let existing = entries[identity], existing.period >= number { continue }
                entries[identity] = Entry(beacon: id, period: number, rotation: rotating.period)
            }
        }
    }

    public var count: Int { entries.count }

    /// The beacon and verdict for `identity` seen at `time`; nil when no beacon ever had it
    /// within the index's window.
    public func match(_ identity: BeaconIdentity, at time: Double) -> Match? {
        guard let entry = entries[identity] else { return nil }
        return Match(beacon: entry.beacon, period: entry.period, verdict: entry.rotation.verdict(period: entry.period, at: time))
    }

    /// Whether `time` lies past the window this index was built for.
    public func isStale(at time: Double) -> Bool { time >= validUntil || time < builtAt }
}
