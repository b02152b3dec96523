import Foundation

/// Which beacons a region, a scan filter or an event filter takes: a UUID, a UUID and major, or
/// one exact beacon, typed as `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR`. Parsed here only, so
/// `--region`, `scan --region` and the server's `?region=` accept and refuse the same texts.
public struct IdentityConstraint: Sendable, Hashable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16?
    public var minor: UInt16?

    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// Parses `UUID[:MAJOR[:MINOR]]`. A refusal names the part (`uuid`, `major`, `minor`, or
    /// `region` for the shape) and quotes at most 80 characters of what was found.
    public init(parsing text: String) throws(IdentityInputError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 3 else {
            throw IdentityInputError(field: "region", value: String(text.prefix(80)),
                                     reason: "expected UUID, UUID:MAJOR or UUID:MAJOR:MINOR, found \(parts.count) colon-separated parts")
        }
        uuid = try BeaconIdentity.parseUUID(String(parts[0].prefix(80)))
        func number(_ index: Int, _ field: String) throws(IdentityInputError) -> UInt16? {
            guard index < parts.count else { return nil }
            guard let value = UInt16(parts[index]) else {
                throw IdentityInputError(field: field, value: String(parts[index].prefix(80)),
                                         reason: "\(field) is a whole number in 0…65535")
            }
            return value
        }
        major = try number(1, "major")
        minor = try number(2, "minor")
    }

    @inlinable
    public func matches(_ identity: BeaconIdentity) -> Bool {
        identity.uuid == uuid && (major == nil || major == identity.major) && (minor == nil || minor == identity.minor)
    }

    /// The text `init(parsing:)` reads back.
    public var description: String {
        [uuid.uuidString, major.map(String.init), minor.map(String.init)].compactMap { $0 }.joined(separator: ":")
    }
}
