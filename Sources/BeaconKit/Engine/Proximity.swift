/// Core Location's coarse distance classes.
public enum Proximity: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case unknown = 0
    case immediate = 1
    case near = 2
    case far = 3

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .immediate: "immediate"
        case .near: "near"
        case .far: "far"
        }
    }
}

/// Zone boundaries and the hysteresis that keeps a receiver standing on a boundary in one zone.
///
/// Two mechanisms, both needed with σ ≈ 4 dB RSSI noise:
/// - **Margin.** Leaving the current zone needs the distance to cross the boundary by the factor
///   `hysteresisRatio`: with 1.3, a beacon in *immediate* becomes *near* only past 0.65 m, and
///   returns to *immediate* only under 0.385 m; *near*/*far* switch at 3.9 m and 2.31 m. With
///   the log-distance model at n = 2, a ratio of 1.3 is ±2.3 dB.
/// - **Confirmation.** The new zone must hold for `confirmationCycles` consecutive ranging cycles
///   before it is reported.
/// A beacon seen for the first time (or again after it left tracking) takes its zone at once.
public struct ProximityZones: Sendable, Hashable {
    public var immediateLimit: Double
    public var nearLimit: Double
    public var hysteresisRatio: Double
    public var confirmationCycles: Int

    public init(immediateLimit: Double = 0.5, nearLimit: Double = 3.0,
                hysteresisRatio: Double = 1.3, confirmationCycles: Int = 3) {
        self.immediateLimit = immediateLimit
        self.nearLimit = nearLimit
        self.hysteresisRatio = max(1, hysteresisRatio)
        self.confirmationCycles = max(1, confirmationCycles)
    }

    public static let `default` = ProximityZones()

    /// The zone of a distance with no history.
    public func zone(for distance: Double?) -> Proximity {
        guard let distance, distance >= 0, distance.isFinite else { return .unknown }
        if distance < immediateLimit { return .immediate }
        if distance < nearLimit { return .near }
        return .far
    }

    /// The zone of a distance seen from `current`: boundaries move away from the current zone
    /// by the hysteresis ratio.
    public func zone(for distance: Double?, from current: Proximity) -> Proximity {
        guard let distance, distance >= 0, distance.isFinite else { return .unknown }
        let ratio = hysteresisRatio
        switch current {
        case .unknown:
            return zone(for: distance)
        case .immediate:
            if distance < immediateLimit * ratio { return .immediate }
            return distance < nearLimit * ratio ? .near : .far
        case .near:
            if distance < immediateLimit / ratio { return .immediate }
            return distance < nearLimit * ratio ? .near : .far
        case .far:
            if distance < immediateLimit / ratio { return .immediate }
            return distance < nearLimit / ratio ? .near : .far
        }
    }
}

/// One beacon's reported zone and the zone waiting for confirmation: three bytes.
public struct ProximityTracker: Sendable, Hashable {
    public private(set) var current: Proximity = .unknown
    private var candidate: Proximity = .unknown
    private var candidateCycles: UInt8 = 0

    public init() {}

    /// Restores a saved tracker (see ``EngineCheckpoint``).
    init(current: Proximity, candidate: Proximity, candidateCycles: UInt8) {
        self.current = current
        self.candidate = candidate
        self.candidateCycles = candidateCycles
    }

    var savedCandidate: (Proximity, UInt8) { (candidate, candidateCycles) }

    /// Feeds one cycle's distance (nil = unknown) and returns the zone to report.
    public mutating func update(distance: Double?, zones: ProximityZones) -> Proximity {
        let observed = zones.zone(for: distance, from: current)
        if observed == .unknown { return .unknown }
        if current == .unknown || observed == current {
            current = observed
            candidate = .unknown
            candidateCycles = 0
            return current
        }
        if observed == candidate {
            candidateCycles &+= 1
        } else {
            candidate = observed
            candidateCycles = 1
        }
        if Int(candidateCycles) >= zones.confirmationCycles {
            current = observed
            candidate = .unknown
            candidateCycles = 0
        }
        return current
    }

    /// Forgets the zone, after the beacon left tracking.
    public mutating func reset() { self = ProximityTracker() }
}
