import BeaconKit
import Foundation

/// Where a help request is: filed by a visitor's phone, acknowledged by a helper, reached when
/// the helper stands by the visitor, then done; or cancelled by the visitor (or staff) first.
public enum HelpRequestState: String, Sendable, Hashable, Codable, CaseIterable {
    case open, acknowledged, reached, done, cancelled

    /// States a request can still leave.
    public var isLive: Bool { self == .open || self == .acknowledged || self == .reached }
}

/// A beacon as JSON names it (BeaconKit's identity has no JSON form of its own).
public struct HelpBeacon: Sendable, Hashable, Codable {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    /// The registry's label for a fixed beacon ("Office – Conference Room: Mordor"); absent for one
    /// it does not know.
    public var label: String?

    public init(uuid: UUID, major: UInt16, minor: UInt16, label: String? = nil) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.label = label
    }

    public var identity: BeaconIdentity { BeaconIdentity(uuid: uuid, major: major, minor: minor) }
}

/// Who acknowledged a request: a helper's registered phone, or a staff token.
public struct HelpHelper: Sendable, Hashable, Codable {
    /// `device-<id>` for a phone, `token-<id>` for a staff token: the key metrics group by.
    public var id: String
    public var name: String
    public var deviceID: String?

    public init(id: String, name: String, deviceID: String?) {
        self.id = id
        self.name = name
        self.deviceID = deviceID
    }
}

/// How far a receiver is from the visitor's help beacon, by its ranging of it.
public struct HelpDistance: Sendable, Hashable, Codable {
    /// Metres; absent when the ranging has no estimate.
    public var distance: Double?
    /// Core Location's class: immediate, near, far or unknown.
    public var proximity: String
    /// The gateway (or helper device) that ranged it.
    public var receiverID: String
    public var receiverName: String?
    /// The ranging's time (the receiver's clock).
    public var time: Double
}

/// One help request, as every route and stream sends it.
public struct HelpRequest: Sendable, Hashable, Codable {
    public var id: Int
    public var siteID: Int
    /// The visitor's phone (a registered device).
    public var deviceID: String
    public var name: String?
    /// What the visitor's phone advertises: the site's UUID, major 999 and a random minor.
    public var beacon: HelpBeacon
    public var state: HelpRequestState
    /// The fixed beacon the visitor's phone heard best last (its own sightings), absent when
    /// it heard none yet.
    public var nearest: HelpBeacon?
    public var createdAt: Double
    public var acknowledgedAt: Double?
    public var helper: HelpHelper?
    public var reachedAt: Double?
    /// `ranging` when the helper's phone ranged the visitor as immediate, `helper` when marked.
    public var reachedBy: String?
    public var doneAt: Double?
    public var cancelledAt: Double?
    /// The helper's phone's latest ranging of the visitor's beacon.
    public var helperDistance: HelpDistance?
    /// The gateway that ranges the visitor's beacon nearest now (filled on reads, not stored).
    public var gatewayDistance: HelpDistance?
    /// The room (zone label) of the visitor: the label of `nearest` while the request is live.
    public var room: String?
    /// Counts up with every change, so a reader can tell a newer copy from an older one.
    public var version: Int
}

/// `POST /v1/help-requests`, sent by the visitor's phone with its device token.
public struct NewHelpRequest: Sendable, Hashable, Codable {
    public var name: String?
    /// The minor under major 999 the phone advertises; chosen at random by the phone, refused
    /// (409 naming `minor`) when an open request of the site uses it.
    public var minor: UInt16

    public init(name: String? = nil, minor: UInt16) {
        self.name = name
        self.minor = minor
    }

    enum CodingKeys: String, CodingKey { case name, minor }

    /// A minor outside 16 bits is refused naming `minor`, not as unreadable JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        let number = try container.decode(Int.self, forKey: .minor)
        guard let minor = UInt16(exactly: number) else {
            throw RegistryError(.invalid, field: "minor", "expected a minor in 0…65535, found \(number)")
        }
        self.minor = minor
    }
}

/// One change of a request, as the streams send it (`event: <kind>`, `data: HelpRequestChange`).
public struct HelpRequestChange: Sendable, Hashable, Codable {
    public var id: Int
    /// `filed`, `acknowledged`, `distance`, `reached`, `done` or `cancelled`.
    public var kind: String
    public var time: Double
    public var request: HelpRequest
}

/// `GET /v1/help-requests/metrics`: totals since the first request, per site and per helper.
public struct HelpRequestMetrics: Sendable, Hashable, Codable {
    public struct Figures: Sendable, Hashable, Codable {
        public var siteID: Int
        /// Absent for the site's totals.
        public var helper: HelpHelper?
        public var filed: Int
        public var acknowledged: Int
        public var reached: Int
        public var done: Int
        public var cancelled: Int
        /// Mean seconds from filed to acknowledged; absent before any acknowledgement.
        public var meanSecondsToAcknowledge: Double?
        /// Mean seconds from acknowledged to reached.
        public var meanSecondsToReach: Double?
        /// done / (done + cancelled) of finished requests; absent before any finished.
        public var successRate: Double?
    }

    public var sites: [Figures]
    public var helpers: [Figures]
}

/// Bounds of help requests, so one site or phone cannot fill the database.
public struct HelpRequestLimits: Sendable, Hashable {
    /// Live (open, acknowledged or reached) requests one site may have.
    public var liveRequestsPerSite = 1_000
    /// Characters of the visitor's name.
    public var nameLength = 100
    /// Requests one list answer may hold.
    public var listLimit = 500
    /// Seconds between two stored distance changes of one request (readings in between update
    /// the request but add no change to the stream).
    public var distanceChangeInterval = 1.0
    /// Gateway readings older than this (seconds, the server's clock) are not a live distance.
    public var gatewayReadingAge = 15.0

    public init() {}

    /// The major the numbering plan keeps for phones asking for help.
    public static let major = NumberingPlan.helpRequestMajor
}
