import Foundation

/// The three numbers that name an iBeacon: a proximity UUID shared by a deployment, a major that
/// usually names a site, and a minor that usually names a spot within it.
public struct BeaconIdentity: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16

    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public var description: String { "\(uuid.uuidString) \(major).\(minor)" }

    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        if lhs.uuid != rhs.uuid { return lhs.uuid.uuidString < rhs.uuid.uuidString }
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        return lhs.minor < rhs.minor
    }
}

extension BeaconIdentity {
    /// Parses user input for identity fields, naming the field and the reason when it is refused.
    public static func parseUUID(_ text: String) throws(IdentityInputError) -> UUID {
        guard let uuid = UUID(uuidString: text.trimmingCharacters(in: .whitespaces)) else {
            throw IdentityInputError(field: "uuid", value: text,
                reason: "expected 32 hexadecimal digits in the form 8-4-4-4-12, e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        return uuid
    }

    public static func parseNumber(_ value: Int, field: String) throws(IdentityInputError) -> UInt16 {
        guard let number = UInt16(exactly: value) else {
            throw IdentityInputError(field: field, value: String(value),
                reason: "\(field) is a 16-bit unsigned field, so it must be in 0…65535")
        }
        return number
    }

    public static func parseMeasuredPower(_ value: Int) throws(IdentityInputError) -> MeasuredPower {
        guard let byte = Int8(exactly: value) else {
            throw IdentityInputError(field: "power", value: String(value),
                reason: "measured power is a signed byte (dBm at 1 m), so it must be in -128…127; -59 is typical")
        }
        return MeasuredPower(byte)
    }
}

/// A value typed by a user that cannot become part of an identity.
public struct IdentityInputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var field: String
    public var value: String
    public var reason: String
    public var description: String { "invalid \(field) '\(value)': \(reason)" }
}
