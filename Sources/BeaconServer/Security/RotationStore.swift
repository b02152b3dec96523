import BeaconKit
import BeaconRotation
import Foundation
import SQLKit

enum RotationMigrations {
    /// Rotation keys, one per beacon, sealed with the server secret; never stored in the clear.
    static let rotationKeys = Migrations.Migration(version: 17, name: "rotation keys") { _ in
        [
            """
            CREATE TABLE beacon_rotations (beacon_id BIGINT PRIMARY KEY REFERENCES beacons(id) ON DELETE CASCADE,
              sealed_key TEXT NOT NULL, key_fingerprint TEXT NOT NULL, period_seconds BIGINT NOT NULL,
              created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)
            """,
        ]
    }
}

/// What the API says about a beacon's rotation: everything but the key.
public struct RotationSettings: Sendable, Hashable, Codable {
    public var beaconID: Int
    /// The UUID the beacon keeps; its major and minor rotate.
    public var uuid: UUID
    public var periodSeconds: Int
    /// The first 8 bytes of SHA-256 of the key, in hex: tells keys apart without revealing them.
    public var keyFingerprint: String
    public var createdAt: Double
    public var updatedAt: Double
    /// The period number at the time of the answer (seconds since 1970 / period, rounded down).
    public var currentPeriod: Int64
    /// When the advertised identity changes next (seconds since 1970).
    public var nextChangeAt: Double
}

/// A rotating beacon as the resolver needs it: its registered identity and its rotation.
struct RotatingBeacon: Sendable {
    var beaconID: Int
    var registered: BeaconIdentity
    var rotating: RotatingIdentity
}

extension Store {
    static func rotationContext(beaconID: Int) -> String { "proxima rotation key, beacon \(beaconID)" }

    /// Stores (or replaces) a beacon's rotation key, sealed with `secret`.
    public func setRotation(beaconID: Int, key: RotationKey, period: RotationPeriod, secret: ServerSecret, now: Double) async throws -> RotationSettings {
        let sealed = try secret.seal(key.bytes, context: Self.rotationContext(beaconID: beaconID)).base64EncodedString()
        return try await database.transaction { db in
            _ = try await Self.beaconUUID(id: beaconID, db: db)
            try await db.raw("""
                INSERT INTO beacon_rotations (beacon_id, sealed_key, key_fingerprint, period_seconds, created_at, updated_at)
                VALUES (\(bind: beaconID), \(bind: sealed), \(bind: key.fingerprint), \(bind: period.seconds), \(bind: now), \(bind: now))
                ON CONFLICT (beacon_id) DO UPDATE SET sealed_key = excluded.sealed_key, key_fingerprint = excluded.key_fingerprint,
                  period_seconds = excluded.period_seconds, updated_at = excluded.updated_at
                """).run()
            return try await Self.rotationSettings(beaconID: beaconID, now: now, db: db)
        }
    }

    public func rotationSettings(beaconID: Int, now: Double) async throws -> RotationSettings {
        try await database.read { db in try await Self.rotationSettings(beaconID: beaconID, now: now, db: db) }
    }

    public func deleteRotation(beaconID: Int) async throws {
        try await database.transaction { db in
            _ = try await Self.beaconUUID(id: beaconID, db: db)
            guard try await db.raw("SELECT beacon_id FROM beacon_rotations WHERE beacon_id = \(bind: beaconID)").first() != nil else {
                throw RegistryError(.notFound, field: "id", "beacon \(beaconID) has no rotation key")
            }
            try await db.raw("DELETE FROM beacon_rotations WHERE beacon_id = \(bind: beaconID)").run()
        }
    }

    static func beaconUUID(id: Int, db: any SQLDatabase) async throws -> UUID {
        guard let row = try await db.raw("SELECT uuid FROM beacons WHERE id = \(bind: id)").first(),
              let uuid = UUID(uuidString: try row.string("uuid")) else {
            throw RegistryError(.notFound, field: "id", "no beacon \(id)")
        }
        return uuid
    }

    static func rotationSettings(beaconID: Int, now: Double, db: any SQLDatabase) async throws -> RotationSettings {
        let uuid = try await beaconUUID(id: beaconID, db: db)
        guard let row = try await db.raw("""
            SELECT key_fingerprint, period_seconds, created_at, updated_at FROM beacon_rotations WHERE beacon_id = \(bind: beaconID)
            """).first() else {
            throw RegistryError(.notFound, field: "id", "beacon \(beaconID) has no rotation key")
        }
        let period = try RotationPeriod(seconds: try row.int("period_seconds"), field: "period_seconds")
        return RotationSettings(beaconID: beaconID, uuid: uuid, periodSeconds: period.seconds, keyFingerprint: try row.string("key_fingerprint"),
                                createdAt: try row.double("created_at"), updatedAt: try row.double("updated_at"),
                                currentPeriod: period.number(at: now), nextChangeAt: period.start(of: period.number(at: now) + 1))
    }

    /// Every rotation key as stored (sealed), with its beacon's registered identity: part of the
    /// registry snapshot, opened by the resolver that holds the secret.
    static func sealedRotations(db: any SQLDatabase) async throws -> [SealedRotation] {
        let rows = try await db.raw("""
            SELECT r.beacon_id, r.sealed_key, r.period_seconds, b.uuid, b.major, b.minor
            FROM beacon_rotations r JOIN beacons b ON b.id = r.beacon_id
            """).all()
        return try rows.map { row in
            let beaconID = try row.int("beacon_id")
            guard let uuid = UUID(uuidString: try row.string("uuid")), let box = Data(base64Encoded: try row.string("sealed_key")) else {
                throw RegistryError(.invalid, field: "sealed_key", "stored rotation of beacon \(beaconID) is unreadable")
            }
            return SealedRotation(beaconID: beaconID, sealedKey: box, periodSeconds: try row.int("period_seconds"),
                                  registered: BeaconIdentity(uuid: uuid, major: try row.uint16("major"), minor: try row.uint16("minor")))
        }
    }
}

/// A rotating beacon's key as the database keeps it: sealed with the server's secret.
struct SealedRotation: Sendable, Hashable {
    var beaconID: Int
    var sealedKey: Data
    var periodSeconds: Int
    var registered: BeaconIdentity

    /// The key opened with `secret`, ready for the resolver's index.
    func opened(with secret: ServerSecret) throws -> RotatingBeacon {
        let key = try RotationKey(bytes: try secret.open(sealedKey, context: Store.rotationContext(beaconID: beaconID)), field: "sealed_key")
        let period = try RotationPeriod(seconds: periodSeconds, field: "period_seconds")
        return RotatingBeacon(beaconID: beaconID, registered: registered,
                              rotating: RotatingIdentity(uuid: registered.uuid, key: key, period: period))
    }

}
