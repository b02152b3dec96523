import BeaconKit
import Foundation

/// A customer of the deployment, owning one or more proximity UUIDs.
public struct Organisation: Sendable, Hashable, Codable {
    public var id: UUID
    public var name: String
    public var proximityUUIDs: [UUID]

    public init(id: UUID = UUID(), name: String, proximityUUIDs: [UUID]) {
        self.id = id
        self.name = name
        self.proximityUUIDs = proximityUUIDs
    }
}

/// A building or shop: one major under one proximity UUID, with a floor plan in metres.
public struct Site: Sendable, Hashable, Codable {
    public var id: Int
    public var organisationID: UUID
    public var uuid: UUID
    public var major: UInt16
    public var name: String
    public var address: String
    public var planWidth: Double
    public var planHeight: Double
    /// Seconds this site's events are kept, when shorter than the server's `--retain-events`;
    /// nil leaves them to the server's limit.
    public var retainEvents: Double?
}

/// What a new site needs; the major comes from the numbering plan when absent.
public struct NewSite: Sendable, Hashable, Codable {
    public var organisationID: UUID
    public var uuid: UUID?
    public var major: UInt16?
    public var name: String
    public var address: String
    public var planWidth: Double
    public var planHeight: Double
    public var retainEvents: Double?

    enum CodingKeys: String, CodingKey { case organisationID, uuid, major, name, address, planWidth, planHeight, retainEvents }

    /// Only the organisation and the name are required; the rest has defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        organisationID = try container.decode(UUID.self, forKey: .organisationID)
        uuid = try container.decodeIfPresent(UUID.self, forKey: .uuid)
        major = try container.decodeIfPresent(UInt16.self, forKey: .major)
        name = try container.decode(String.self, forKey: .name)
        address = try container.decodeIfPresent(String.self, forKey: .address) ?? ""
        planWidth = try container.decodeIfPresent(Double.self, forKey: .planWidth) ?? 0
        planHeight = try container.decodeIfPresent(Double.self, forKey: .planHeight) ?? 0
        retainEvents = try container.decodeIfPresent(Double.self, forKey: .retainEvents)
    }

    public init(organisationID: UUID, uuid: UUID? = nil, major: UInt16? = nil, name: String, address: String = "",
                planWidth: Double = 0, planHeight: Double = 0, retainEvents: Double? = nil) {
        self.organisationID = organisationID
        self.uuid = uuid
        self.major = major
        self.name = name
        self.address = address
        self.planWidth = planWidth
        self.planHeight = planHeight
        self.retainEvents = retainEvents
    }
}

/// A zone or point of interest within a site, named by its minor.
public struct Zone: Sendable, Hashable, Codable {
    public var id: Int
    public var siteID: Int
    public var minor: UInt16
    public var label: String
    public var category: Int
    public var position: Position
}

/// A named group of minors: category c owns minors c×1000+1 … c×1000+999.
public struct Category: Sendable, Hashable, Codable {
    public var code: Int
    public var name: String
    public init(code: Int, name: String) {
        self.code = code
        self.name = name
    }
}

/// Where a physical beacon is in its life.
public enum BeaconState: String, Sendable, Hashable, Codable, CaseIterable {
    case planned, deployed, retired
}

/// A physical transmitter and how it is configured.
public struct Beacon: Sendable, Hashable, Codable {
    public var id: Int
    public var siteID: Int
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var position: Position
    public var measuredPower: Int
    public var txPower: Int
    public var battery: String
    /// ISO 8601 date (yyyy-MM-dd), nil until installed.
    public var installedOn: String?
    public var state: BeaconState

    public var identity: BeaconIdentity { BeaconIdentity(uuid: uuid, major: major, minor: minor) }
}

/// The fields of a beacon to add; the identity is allocated when `minor` is nil.
public struct NewBeacon: Sendable, Hashable, Codable {
    public var siteID: Int
    public var category: Int
    public var label: String
    public var position: Position
    public var minor: UInt16?
    public var measuredPower: Int
    public var txPower: Int
    public var battery: String
    public var installedOn: String?
    public var state: BeaconState

    public init(siteID: Int, category: Int, label: String, position: Position, minor: UInt16? = nil,
                measuredPower: Int = -59, txPower: Int = 0, battery: String = "CR2477",
                installedOn: String? = nil, state: BeaconState = .planned) {
        self.siteID = siteID
        self.category = category
        self.label = label
        self.position = position
        self.minor = minor
        self.measuredPower = measuredPower
        self.txPower = txPower
        self.battery = battery
        self.installedOn = installedOn
        self.state = state
    }
}

/// Two or more deployed beacons answering to one identity.
public struct IdentityConflict: Sendable, Hashable, Codable {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var beaconIDs: [Int]
}

/// A registry operation refused for a reason the caller can act on.
public struct RegistryError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, Codable {
        case notFound, conflict, exhausted, invalid
    }
    public var kind: Kind
    public var field: String
    public var message: String
    public init(_ kind: Kind, field: String, _ message: String) {
        self.kind = kind
        self.field = field
        self.message = message
    }
    public var description: String { "\(field): \(message)" }
}
