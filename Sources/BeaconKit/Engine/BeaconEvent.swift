/// Whether the receiver is inside a region.
public enum RegionState: String, Sendable, Hashable, Codable {
    case unknown, inside, outside
}

/// One beacon in a ranging cycle, with `CLBeacon`'s fields and meaning.
public struct RangedBeacon: Sendable, Hashable {
    public var identity: BeaconIdentity
    public var proximity: Proximity
    /// Estimated metres, or −1 when unknown (not heard this cycle, or unusable measured power).
    public var accuracy: Double
    /// The mean RSSI of this cycle's packets in dBm, or 0 when none was heard (or none carried
    /// an RSSI).
    public var rssi: Int
    public var measuredPower: MeasuredPower
    /// When the beacon was last heard, on the source's clock.
    public var timestamp: Double
    /// Packets heard in this cycle.
    public var packetCount: Int

    public init(identity: BeaconIdentity, proximity: Proximity, accuracy: Double, rssi: Int,
                measuredPower: MeasuredPower, timestamp: Double, packetCount: Int) {
        self.identity = identity
        self.proximity = proximity
        self.accuracy = accuracy
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.timestamp = timestamp
        self.packetCount = packetCount
    }

    /// Core Location's order: nearest first, unknown accuracy last; identity breaks ties so the
    /// order is deterministic.
    public static func rangingOrder(_ lhs: RangedBeacon, _ rhs: RangedBeacon) -> Bool {
        let lhsKnown = lhs.accuracy >= 0, rhsKnown = rhs.accuracy >= 0
        if lhsKnown != rhsKnown { return lhsKnown }
        if lhsKnown && lhs.accuracy != rhs.accuracy { return lhs.accuracy < rhs.accuracy }
        return IdentityKey(lhs.identity) < IdentityKey(rhs.identity)
    }
}

/// What the engine reports. `time` is on the source's clock: the packet that caused the change,
/// for exits the moment the silence reached the exit timeout (reported at the next packet or
/// tick after it), for ranging the cycle's end.
public enum BeaconEvent: Sendable, Hashable {
    case didEnter(BeaconRegion, time: Double)
    case didExit(BeaconRegion, time: Double)
    case didDetermineState(RegionState, BeaconRegion, time: Double)
    /// One ranging cycle for one ranged region; `time` is the cycle's end.
    case didRange([RangedBeacon], BeaconRegion, time: Double)

    public var region: BeaconRegion {
        switch self {
        case .didEnter(let region, _), .didExit(let region, _),
             .didDetermineState(_, let region, _), .didRange(_, let region, _): region
        }
    }

    public var time: Double {
        switch self {
        case .didEnter(_, let time), .didExit(_, let time),
             .didDetermineState(_, _, let time), .didRange(_, _, let time): time
        }
    }
}

/// Monitoring refused.
public enum MonitoringError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Starting the region would exceed the configured region limit.
    case regionLimitExceeded(limit: Int, identifier: String)
    case unknownRegion(identifier: String)

    public var description: String {
        switch self {
        case .regionLimitExceeded(let limit, let identifier):
            "cannot monitor region '\(identifier)': the limit of \(limit) monitored regions is reached (stop one first, or raise the limit)"
        case .unknownRegion(let identifier):
            "no monitored region has the identifier '\(identifier)'"
        }
    }
}
