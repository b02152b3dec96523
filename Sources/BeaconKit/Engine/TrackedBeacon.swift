/// A beacon's place in the engine's dense arrays, handed out by ``BeaconEngine/intern(_:measuredPower:)``
/// so a source that has already identified a beacon can skip the identity lookup.
public struct BeaconIndex: Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
}

/// Everything the engine keeps per beacon apart from its identity, in one flat value so the
/// per-packet path touches one cache line and allocates nothing.
struct TrackedBeacon: Sendable {
    var lastHeard: Double = -.infinity
    /// When the current silence turns into an exit (or lapses the entry evidence).
    var exitDeadline: Double = -.infinity
    var reception = ReceptionStatistics()
    /// The evidence rule's per-beacon knowledge (unused by the other rules).
    var presence = PresenceEvidence()
    var filter = RSSIFilterState()
    var cycleRSSISum: Int32 = 0
    var pathLossExponent: Float
    var cycleRSSICount: UInt16 = 0
    var cyclePackets: UInt16 = 0
    var evidence: UInt16 = 0
    var measuredPower: Int8
    var isPresent = false
    /// Changed since the owner last took the changes (``BeaconEngine/takeChanges()``), so a
    /// checkpoint writes only the beacons a batch touched.
    var isChanged = false
    var proximity = ProximityTracker()
    /// Where this beacon's monitored-region indices start in the engine's match pool.
    var monitorMatchStart: UInt32 = 0
    var rangeMatchStart: UInt32 = 0
    var monitorMatchCount: UInt32 = 0
    var rangeMatchCount: UInt32 = 0

    init(measuredPower: MeasuredPower, pathLossExponent: Double?) {
        self.measuredPower = measuredPower.dBm
        self.pathLossExponent = Float(pathLossExponent ?? .nan)
    }
}

/// A monitored region and how many present beacons it contains.
struct MonitoredRegion: Sendable {
    var region: BeaconRegion
    var presentCount: Int32 = 0
    var state: RegionState = .outside
}
