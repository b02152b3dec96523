import BeaconKit
import Crypto
import Foundation

/// A beacon whose major and minor change every period while its proximity UUID stays:
/// `HMAC-SHA256(key, period number as 8 bytes big-endian)`, whose first two bytes are the major
/// and next two the minor (both big-endian). Only holders of the key can tell which registered
/// beacon an identity belongs to, or predict the next one.
public struct RotatingIdentity: Sendable, Hashable {
    public var uuid: UUID
    public var key: RotationKey
    public var period: RotationPeriod

    public init(uuid: UUID, key: RotationKey, period: RotationPeriod = .day) {
        self.uuid = uuid
        self.key = key
        self.period = period
    }

    /// Major and minor of period `number`.
    public static func derive(key: RotationKey, period number: Int64) -> (major: UInt16, minor: UInt16) {
        var message = [UInt8](repeating: 0, count: 8)
        let bits = UInt64(bitPattern: number)
        for index in 0..<8 { message[index] = UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64(index))) }
        let mac = Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key.bytes)))
        return (UInt16(mac[0]) << 8 | UInt16(mac[1]), UInt16(mac[2]) << 8 | UInt16(mac[3]))
    }

    public func identity(forPeriod number: Int64) -> BeaconIdentity {
        let (major, minor) = Self.derive(key: key, period: number)
        return BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    public func identity(at time: Double) -> BeaconIdentity {
        identity(forPeriod: period.number(at: time))
    }

    /// The first boundary strictly after `time`, when the advertised identity must change.
    public func nextChange(after time: Double) -> Double {
        period.start(of: period.number(at: time) + 1)
    }
}
