import Foundation

/// A set of beacons to monitor or range, named by the caller, as Core Location's
/// `CLBeaconRegion`: every beacon with a UUID, with a UUID and major, or one exact beacon.
public struct BeaconRegion: Sendable, Hashable, CustomStringConvertible {
    /// The caller's name for the region. Starting a region with an identifier already in use
    /// replaces the old region.
    public var identifier: String
    public private(set) var uuid: UUID
    public private(set) var major: UInt16?
    public private(set) var minor: UInt16?
    /// Report entering the region.
    public var notifyOnEntry: Bool
    /// Report leaving the region.
    public var notifyOnExit: Bool
    /// Report the region's current state as soon as monitoring starts (the engine's stand-in
    /// for Core Location's `notifyEntryStateOnDisplay`, which needs a screen).
    public var notifyEntryStateOnStart: Bool

    /// Refuses a minor without a major: Core Location has no such region, because a minor is
    /// only meaningful inside the site its major names.
    public init(identifier: String, uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil,
                notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
                notifyEntryStateOnStart: Bool = false) throws(RegionError) {
        if minor != nil && major == nil {
            throw RegionError(identifier: identifier, reason: "a minor (\(minor!)) needs a major: regions are UUID, UUID+major or UUID+major+minor")
        }
        if identifier.isEmpty {
            throw RegionError(identifier: identifier, reason: "the identifier must not be empty")
        }
        self.identifier = identifier
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.notifyEntryStateOnStart = notifyEntryStateOnStart
    }

    /// Whether the beacon belongs to the region.
    @inlinable
    public func contains(_ identity: BeaconIdentity) -> Bool {
        identity.uuid == uuid
            && (major == nil || major == identity.major)
            && (minor == nil || minor == identity.minor)
    }

    /// `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR`, the form `--region` accepts.
    public var constraintText: String { IdentityConstraint(uuid: uuid, major: major, minor: minor).description }

    public var description: String { "\(identifier) (\(constraintText))" }

    /// Parses `UUID[:MAJOR[:MINOR]]` (see `IdentityConstraint`); the identifier defaults to that text.
    public init(parsing text: String, identifier: String? = nil) throws(RegionError) {
        let name = identifier ?? text
        let constraint: IdentityConstraint
        do { constraint = try IdentityConstraint(parsing: text) } catch { throw RegionError(identifier: name, reason: error.description) }
        try self.init(identifier: name, uuid: constraint.uuid, major: constraint.major, minor: constraint.minor)
    }
}

/// A region that cannot be built or monitored, and why.
public struct RegionError: Error, Sendable, Hashable, CustomStringConvertible {
    public var identifier: String
    public var reason: String
    public init(identifier: String, reason: String) {
        self.identifier = identifier
        self.reason = reason
    }
    public var description: String { "region '\(identifier)': \(reason)" }
}

extension BeaconRegion: Codable {
    private enum CodingKeys: String, CodingKey {
        case identifier, uuid, major, minor, notifyOnEntry, notifyOnExit, notifyEntryStateOnStart
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let identifier = try container.decode(String.self, forKey: .identifier)
        let uuidText = try container.decode(String.self, forKey: .uuid)
        guard let uuid = UUID(uuidString: uuidText) else {
            throw DecodingError.dataCorruptedError(forKey: .uuid, in: container,
                debugDescription: "expected a UUID in the form 8-4-4-4-12, found '\(uuidText)'")
        }
        do {
            try self.init(
                identifier: identifier, uuid: uuid,
                major: try container.decodeIfPresent(UInt16.self, forKey: .major),
                minor: try container.decodeIfPresent(UInt16.self, forKey: .minor),
                notifyOnEntry: try container.decodeIfPresent(Bool.self, forKey: .notifyOnEntry) ?? true,
                notifyOnExit: try container.decodeIfPresent(Bool.self, forKey: .notifyOnExit) ?? true,
                notifyEntryStateOnStart: try container.decodeIfPresent(Bool.self, forKey: .notifyEntryStateOnStart) ?? false)
        } catch let error as RegionError {
            throw DecodingError.dataCorruptedError(forKey: .minor, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(uuid.uuidString, forKey: .uuid)
        try container.encodeIfPresent(major, forKey: .major)
        try container.encodeIfPresent(minor, forKey: .minor)
        try container.encode(notifyOnEntry, forKey: .notifyOnEntry)
        try container.encode(notifyOnExit, forKey: .notifyOnExit)
        try container.encode(notifyEntryStateOnStart, forKey: .notifyEntryStateOnStart)
    }
}
