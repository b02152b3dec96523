import BeaconKit
import Foundation

/// What the registry says of one beacon: the expectation every check compares against.
public struct FleetBeacon: Sendable, Hashable {
    public var identity: BeaconIdentity
    public var label: String
    public var siteID: Int
    public var position: Position?
    public var measuredPower: Int8?
    /// The battery's type as the registry names it (`CR2477`, `2xAA`, …).
    public var battery: String
    /// When it was installed, in the sightings' clock (epoch seconds); nil when unknown.
    public var installedAt: Double?
    /// Carried beacons move, so the position, drift and out-of-place checks do not apply.
    public var isFixed: Bool
    /// Only deployed beacons can be missing; planned and retired ones are still registered.
    public var isDeployed: Bool

    public init(identity: BeaconIdentity, label: String, siteID: Int, position: Position? = nil,
                measuredPower: Int8? = nil, battery: String = "CR2477", installedAt: Double? = nil,
                isFixed: Bool = true, isDeployed: Bool = true) {
        self.identity = identity
        self.label = label
        self.siteID = siteID
        self.position = position
        self.measuredPower = measuredPower
        self.battery = battery
        self.installedAt = installedAt
        self.isFixed = isFixed
        self.isDeployed = isDeployed
    }
}

/// A receiver that reports sightings; `name` is `Sighting.receiver`.
public struct FleetGateway: Sendable, Hashable {
    public var name: String
    public var siteID: Int
    public var position: Position?
    /// A phone that posts its own sightings moves: its links say nothing about drift.
    public var isFixed: Bool

    public init(name: String, siteID: Int, position: Position? = nil, isFixed: Bool = true) {
        self.name = name
        self.siteID = siteID
        self.position = position
        self.isFixed = isFixed
    }
}

/// How worried an operator should be. Ordered: the state of a beacon is its worst finding.
public enum HealthLevel: String, Sendable, Hashable, Codable, Comparable, CaseIterable {
    case ok, unknown, warning, alert

    private var rank: Int {
        switch self {
        case .ok: 0
        case .unknown: 1
        case .warning: 2
        case .alert: 3
        }
    }

    public static func < (lhs: HealthLevel, rhs: HealthLevel) -> Bool { lhs.rank < rhs.rank }
}

/// The checks of issue 12, each with its own state per subject.
public enum FleetCheck: String, Sendable, Hashable, Codable, CaseIterable {
    /// Deployed but not heard by gateways that should hear it.
    case missing
    /// Heard under the organisation's UUID but not in the registry.
    case unregistered
    /// Heard strongly where it is not deployed.
    case outOfPlace
    /// One identity from two transmitters.
    case clone
    /// Battery low or ageing.
    case battery
    /// A fixed link's RSSI shifted for longer than noise explains.
    case drift
    /// Telemetry with impossible values.
    case telemetry
    /// Many unknown identities from one place at once (a rogue sending random minors).
    case identityFlood
    /// A rotating beacon's identity heard outside its window (yesterday's, replayed); raised by
    /// the server's rotation resolver, not by these checks, and left open for an operator.
    case rotationReplay
    // The spoof and replay checks (BeaconSecurity, issue 15), raised by the server's security
    // detectors and cleared after a quiet period; the reason is the detector's.
    /// A gateway's clock leads the server's, or jumped or drifted from its usual offset.
    case clockSkew
    /// A gateway's sightings arrived long after their timestamps: held back or replayed.
    case staleSightings
    /// One identity heard at places farther apart than a walk allows in the time between.
    case impossibleTrace
    /// A fixed beacon heard by a gateway too strongly for the distance between them.
    case outOfCoverage
    /// A fixed beacon's RSSI at a gateway rose abruptly above its long mean.
    case rssiShift
    /// A registered beacon's identity heard from a second address.
    case secondAddress
    /// A phone heard a fixed beacon as if beside it but none of the beacons around it.
    case absentNeighbours
}

/// What a check found about one subject, with a reason a person can read.
public struct FleetFinding: Sendable, Hashable, Codable {
    public var check: FleetCheck
    public var level: HealthLevel
    public var reason: String
    /// When the current level was reached.
    public var since: Double

    public init(check: FleetCheck, level: HealthLevel, reason: String, since: Double) {
        self.check = check
        self.level = level
        self.reason = reason
        self.since = since
    }
}

/// Who a finding is about: a registered beacon, an unknown identity, or a gateway.
public enum FleetSubject: Sendable, Hashable, CustomStringConvertible {
    case beacon(BeaconIdentity)
    case gateway(String)

    public var description: String {
        switch self {
        case .beacon(let identity): identity.description
        case .gateway(let name): "gateway \(name)"
        }
    }
}

/// A change of a finding's level: what alert events are made of.
public struct FleetTransition: Sendable, Hashable {
    public var subject: FleetSubject
    public var check: FleetCheck
    public var from: HealthLevel
    public var to: HealthLevel
    public var reason: String
    public var time: Double

    public init(subject: FleetSubject, check: FleetCheck, from: HealthLevel, to: HealthLevel, reason: String, time: Double) {
        self.subject = subject
        self.check = check
        self.from = from
        self.to = to
        self.reason = reason
        self.time = time
    }

    /// Raised when the level grows, cleared when it falls back to ok.
    public var isRaised: Bool { to > from }
}
