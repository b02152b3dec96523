import Foundation
import SQLKit

/// Schema changes, applied in order at start and recorded in `schema_migrations`, so a database
/// created by an older server is brought up to date and a current one is left alone.
enum Migrations {
    struct Migration: Sendable {
        var version: Int
        var name: String
        var statements: @Sendable (ProximaDatabase.Dialect) -> [String]
    }

    static func run(on database: ProximaDatabase) async throws {
        try await database.read { db in
            try await db.raw("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)").run()
        }
        for migration in all {
            try await database.transaction { db in
                // Two servers starting together on one PostgreSQL: the first takes the lock,
                // the second waits and then finds the version applied.
                if database.dialect == .postgres {
                    try await db.raw("LOCK TABLE schema_migrations IN EXCLUSIVE MODE").run()
                }
                let applied = try await db.raw("SELECT version FROM schema_migrations WHERE version = \(bind: migration.version)").first()
                guard applied == nil else { return }
                for statement in migration.statements(database.dialect) {
                    try await db.raw(SQLQueryString(statement)).run()
                }
                try await db.raw("INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: Date().timeIntervalSince1970))").run()
            }
        }
    }

    static func serialKey(_ dialect: ProximaDatabase.Dialect) -> String {
        dialect == .sqlite ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGSERIAL PRIMARY KEY"
    }

    static let all: [Migration] = [
        Migration(version: 1, name: "registry") { dialect in
            let id = serialKey(dialect)
            return [
                "CREATE TABLE organisations (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
                "CREATE TABLE organisation_uuids (uuid TEXT PRIMARY KEY, organisation_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE)",
                "CREATE TABLE categories (code BIGINT PRIMARY KEY, name TEXT NOT NULL)",
                """
                CREATE TABLE sites (id \(id), organisation_id TEXT NOT NULL REFERENCES organisations(id),
                  uuid TEXT NOT NULL, major BIGINT NOT NULL, name TEXT NOT NULL, address TEXT NOT NULL,
                  plan_width DOUBLE PRECISION NOT NULL, plan_height DOUBLE PRECISION NOT NULL, UNIQUE (uuid, major))
                """,
                """
                CREATE TABLE zones (id \(id), site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
                  minor BIGINT NOT NULL, label TEXT NOT NULL, category BIGINT NOT NULL,
                  x DOUBLE PRECISION NOT NULL, y DOUBLE PRECISION NOT NULL, UNIQUE (site_id, minor))
                """,
                """
                CREATE TABLE beacons (id \(id), site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
                  uuid TEXT NOT NULL, major BIGINT NOT NULL, minor BIGINT NOT NULL,
                  x DOUBLE PRECISION NOT NULL, y DOUBLE PRECISION NOT NULL,
                  measured_power BIGINT NOT NULL, tx_power BIGINT NOT NULL, battery TEXT NOT NULL,
                  installed_on TEXT, state TEXT NOT NULL)
                """,
                // The rule "no two deployed beacons share an identity", kept by the database too.
                "CREATE UNIQUE INDEX beacons_deployed_identity ON beacons (uuid, major, minor) WHERE state = 'deployed'",
                "CREATE INDEX beacons_identity ON beacons (uuid, major, minor)",
            ]
        },
        Migration(version: 2, name: "access and gateways") { dialect in
            let id = serialKey(dialect)
            return [
                "CREATE TABLE gateways (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, site_id BIGINT, created_at DOUBLE PRECISION NOT NULL)",
                """
                CREATE TABLE tokens (id \(id), name TEXT NOT NULL, role TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
                  gateway_id TEXT REFERENCES gateways(id) ON DELETE CASCADE, created_at DOUBLE PRECISION NOT NULL)
                """,
                """
                CREATE TABLE gateway_checkpoints (gateway_id TEXT PRIMARY KEY REFERENCES gateways(id) ON DELETE CASCADE,
                  last_sequence BIGINT NOT NULL, state TEXT NOT NULL, updated_by TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL)
                """,
                """
                CREATE TABLE region_events (id \(id), gateway_id TEXT NOT NULL, kind TEXT NOT NULL,
                  uuid TEXT NOT NULL, major BIGINT NOT NULL, minor BIGINT NOT NULL, site_id BIGINT, label TEXT NOT NULL,
                  time DOUBLE PRECISION NOT NULL, recorded_at DOUBLE PRECISION NOT NULL)
                """,
                "CREATE INDEX region_events_site ON region_events (site_id, id)",
                """
                CREATE TABLE ranging_state (gateway_id TEXT NOT NULL, uuid TEXT NOT NULL, major BIGINT NOT NULL, minor BIGINT NOT NULL,
                  rssi DOUBLE PRECISION NOT NULL, distance DOUBLE PRECISION, proximity TEXT NOT NULL, time DOUBLE PRECISION NOT NULL,
                  PRIMARY KEY (gateway_id, uuid, major, minor))
                """,
                """
                CREATE TABLE webhooks (id \(id), url TEXT NOT NULL, secret TEXT NOT NULL, site_id BIGINT,
                  created_at DOUBLE PRECISION NOT NULL)
                """,
            ]
        },
        Migration(version: 3, name: "gateway checkpoints per beacon") { _ in
            [
                // Checkpoints become a header row plus a row per beacon. The old whole-engine
                // states are dropped: each gateway's engine starts afresh, so beacons present
                // at the upgrade enter once more.
                "DELETE FROM gateway_checkpoints",
                "ALTER TABLE gateway_checkpoints ADD COLUMN version BIGINT NOT NULL DEFAULT 0",
                """
                CREATE TABLE gateway_beacons (gateway_id TEXT NOT NULL REFERENCES gateways(id) ON DELETE CASCADE,
                  identity TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (gateway_id, identity))
                """,
            ]
        },
        PositionMigrations.siteMaps,
        FleetMigrations.alerts,
        AppMigrations.devicesAndMessages,
        QueueMigrations.checkinsAndQueues,
        HelpRequestMigrations.helpRequests,
        HuntMigrations.huntsAndOffers,
        TokenMigrations.lifecycle,
        AuditMigrations.auditLog,
        PassMigrations.passes,
        RotationMigrations.rotationKeys,
        SiteRetention.migration,
        RegistryGeneration.migration,
        BatchOutbox.migration,
        BatchOutbox.uncompressedSightings,
        BatchOutbox.binarySightings,
    ]
}
