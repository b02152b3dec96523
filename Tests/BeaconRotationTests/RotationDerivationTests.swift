import BeaconKit
@testable import BeaconRotation
import Foundation
import Testing

/// The derivation against HMAC-SHA256 computed independently (Python's `hmac` module, the
/// commands are in docs/security.md), and the key and period formats with their refusals.
@Suite struct RotationDerivationTests {
    struct Vector: Sendable, CustomStringConvertible {
        var key: String
        var period: Int64
        var major: UInt16
        var minor: UInt16
        var description: String { "period \(period)" }
    }

    static let vectors = [
        Vector(key: "000102030405060708090a0b0c0d0e0f", period: 20_000, major: 63_097, minor: 8_868),  // mac f6 79 22 a4
        Vector(key: "000102030405060708090a0b0c0d0e0f", period: 0, major: 50_864, minor: 50_641),      // mac c6 b0 c5 d1
        Vector(key: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", period: 20_419, major: 59_544, minor: 20_017),
        Vector(key: "000102030405060708090a0b0c0d0e0f", period: -1, major: 40_248, minor: 46_192),     // two's complement ff…ff
    ]

    @Test(arguments: vectors) func derivationMatchesIndependentHMAC(_ vector: Vector) throws {
        let key = try RotationKey(parsing: vector.key)
        let derived = RotatingIdentity.derive(key: key, period: vector.period)
        #expect(derived.major == vector.major)
        #expect(derived.minor == vector.minor)
    }

    @Test func identityKeepsTheUUIDAndChangesAtMidnightUTC() throws {
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        let rotating = RotatingIdentity(uuid: uuid, key: try RotationKey(parsing: "000102030405060708090a0b0c0d0e0f"))
        let midnight = 20_000.0 * 86_400  // 2024-10-04T00:00:00Z
        #expect(rotating.identity(at: midnight) == BeaconIdentity(uuid: uuid, major: 63_097, minor: 8_868))
        #expect(rotating.identity(at: midnight - 0.001) == rotating.identity(forPeriod: 19_999))
        #expect(rotating.identity(at: midnight + 86_399.9) == rotating.identity(forPeriod: 20_000))
        #expect(rotating.nextChange(after: midnight) == midnight + 86_400)
        #expect(rotating.nextChange(after: midnight - 1) == midnight)
    }

    @Test func base64AndHexNameTheSameKey() throws {
        let hex = try RotationKey(parsing: "000102030405060708090A0B0C0D0E0F")
        let base64 = try RotationKey(parsing: Data((0..<16).map(UInt8.init)).base64EncodedString())
        #expect(hex == base64)
        #expect(hex.fingerprint.count == 16)
        #expect(hex.fingerprint != (try RotationKey(bytes: Array(repeating: 1, count: 16))).fingerprint)
    }

    @Test(arguments: [
        ("", "found nothing"),
        ("00010203", "found 8 hex digits"),
        ("000102030405060708090a0b0c0d0e0f0", "found 33 hex digits"),
        (Data(repeating: 7, count: 40).base64EncodedString(), "found 40 bytes"),
        ("not a key at all!", "offset 3"),
    ])
    func badKeysNameTheField(_ text: String, _ expected: String) {
        #expect {
            try RotationKey(parsing: text, field: "--rotation-key")
        } throws: { error in
            guard let error = error as? RotationInputError else { return false }
            return error.field == "--rotation-key" && error.reason.contains(expected)
        }
    }

    @Test func periodsParseFromMinutesToDays() throws {
        #expect(try RotationPeriod(parsing: "24h").seconds == 86_400)
        #expect(try RotationPeriod(parsing: "15m").seconds == 900)
        #expect(try RotationPeriod(parsing: "2d").seconds == 172_800)
        #expect(try RotationPeriod(parsing: "3600").seconds == 3_600)
        #expect(try RotationPeriod(parsing: "24h").description == "1d")
        for bad in ["59s", "0m", "-5m", "soon", "400d", "99999999999999999999h"] {
            #expect(throws: RotationInputError.self, "\(bad)") { try RotationPeriod(parsing: bad, field: "--rotation-period") }
        }
    }
}
