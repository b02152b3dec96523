import BeaconKit
import Foundation

/// A scan filter in the shape of a region: UUID, UUID+major, or UUID+major+minor.
public struct IdentityPattern: Sendable, Hashable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16?
    public var minor: UInt16?

    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// Parses `UUID[:MAJOR[:MINOR]]` (see `IdentityConstraint`).
    public init(parsing text: String) throws(IdentityPatternError) {
        let constraint: IdentityConstraint
        do { constraint = try IdentityConstraint(parsing: text) } catch {
            throw IdentityPatternError(text: text, reason: error.description)
        }
        self.init(uuid: constraint.uuid, major: constraint.major, minor: constraint.minor)
    }

    private var constraint: IdentityConstraint { IdentityConstraint(uuid: uuid, major: major, minor: minor) }

    public func matches(_ identity: BeaconIdentity) -> Bool { constraint.matches(identity) }

    /// Whether a sighting passes a list of patterns: all pass an empty list; otherwise only
    /// iBeacons matching one of them.
    public static func admits(_ frame: BeaconFrame, patterns: [IdentityPattern]) -> Bool {
        guard !patterns.isEmpty else { return true }
        guard let identity = frame.iBeacon?.identity else { return false }
        return patterns.contains { $0.matches(identity) }
    }

    public var description: String { constraint.description }
}

public struct IdentityPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var reason: String
    public var description: String { "invalid region '\(text)': \(reason)" }
}
