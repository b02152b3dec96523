import BeaconKit
import Foundation

/// What the server follows on a site's map: a carried beacon (an iBeacon that is not one of the
/// map's fixed beacons, located from the gateways that hear it) or a phone (a gateway that is
/// not one of the map's receivers, located from the fixed beacons it hears).
public enum TrackedSubject: Sendable, Hashable, Comparable {
    case beacon(BeaconIdentity)
    /// A mobile gateway, by its registered name.
    case phone(String)

    public var kind: String {
        switch self {
        case .beacon: "beacon"
        case .phone: "phone"
        }
    }

    /// `UUID:major:minor` for a beacon, the gateway's name for a phone: what `from=` of
    /// `GET /v1/route` takes.
    public var name: String {
        switch self {
        case .beacon(let identity): "\(identity.uuid.uuidString):\(identity.major):\(identity.minor)"
        case .phone(let name): name
        }
    }

    public static func < (lhs: TrackedSubject, rhs: TrackedSubject) -> Bool {
        (lhs.kind, lhs.name) < (rhs.kind, rhs.name)
    }
}

/// A subject entering or leaving a room, as the tracker reports it.
public struct SubjectRoomChange: Sendable, Hashable {
    public var subject: TrackedSubject
    public var room: String
    public var kind: RoomEvent.Kind
    public var time: Double
}

/// The latest that is known of one subject: `GET /v1/positions` and `GET /v1/rooms`.
public struct SubjectPosition: Sendable, Hashable, Codable {
    public var subject: String
    /// `beacon` or `phone`.
    public var kind: String
    public var uuid: UUID?
    public var major: UInt16?
    public var minor: UInt16?
    /// Metres on the site's map; absent while no fix was possible (heard only by room receivers).
    public var x: Double?
    public var y: Double?
    /// About one standard deviation, metres.
    public var uncertainty: Double?
    public var method: String?
    /// Seconds on the gateways' clock of the latest fix.
    public var fixTime: Double?
    /// The decided room (the site's room decider, or room presence), null outside every room.
    public var room: String?
    /// When the subject was last heard.
    public var lastHeard: Double
    /// How many anchors (gateways for a beacon, fixed beacons for a phone) the latest fix used.
    public var anchors: Int

    public init(subject: String, kind: String, uuid: UUID? = nil, major: UInt16? = nil, minor: UInt16? = nil, x: Double? = nil,
                y: Double? = nil, uncertainty: Double? = nil, method: String? = nil, fixTime: Double? = nil, room: String? = nil,
                lastHeard: Double, anchors: Int) {
        self.subject = subject
        self.kind = kind
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.x = x
        self.y = y
        self.uncertainty = uncertainty
        self.method = method
        self.fixTime = fixTime
        self.room = room
        self.lastHeard = lastHeard
        self.anchors = anchors
    }
}
