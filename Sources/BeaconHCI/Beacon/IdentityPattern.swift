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

    /// Parses `UUID[:MAJOR[:MINOR]]`.
    public init(parsing text: String) throws(IdentityPatternError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (1...3).contains(parts.count) else {
            throw IdentityPatternError(text: text, reason: "expected UUID[:MAJOR[:MINOR]]")
        }
        do {
            uuid = try BeaconIdentity.parseUUID(parts[0])
        } catch {
            throw IdentityPatternError(text: text, reason: error.description)
        }
        func number(_ index: Int, _ field: String) throws(IdentityPatternError) -> UInt16? {
            guard parts.count > index else { return nil }
            guard let value = Int(parts[index]), let number = UInt16(exactly: value) else {
                throw IdentityPatternError(text: text, reason: "\(field) '\(parts[index])' is not a number in 0…65535")
            }
            return number
        }
        major = try number(1, "major")
        minor = try number(2, "minor")
    }

    public func matches(_ identity: BeaconIdentity) -> Bool {
        identity.uuid == uuid && (major.map { $0 == identity.major } ?? true) && (minor.map { $0 == identity.minor } ?? true)
    }

    /// Whether a sighting passes a list of patterns: all pass an empty list; otherwise only
    /// iBeacons matching one of them.
    public static func admits(_ frame: BeaconFrame, patterns: [IdentityPattern]) -> Bool {
        guard !patterns.isEmpty else { return true }
        guard let identity = frame.iBeacon?.identity else { return false }
        return patterns.contains { $0.matches(identity) }
    }

    public var description: String {
        [uuid.uuidString, major.map(String.init), minor.map(String.init)].compactMap { $0 }.joined(separator: ":")
    }
}

public struct IdentityPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var reason: String
    public var description: String { "invalid region '\(text)': \(reason)" }
}
