import SQLKit

/// The registry's generation: one counter row that the database itself moves on every write to
/// a table the per-batch consumers read (fleet, security, rotation). A trigger cannot be
/// forgotten by a new route, and it counts writes made by any instance sharing the database, so a
/// consumer that compares the stored generation with the one it loaded never misses a change
/// and never reloads for a write that changed no registry table (a sighting, an upload, a check-in).
enum RegistryGeneration {
    /// The tables whose rows make up the registry snapshot.
    static let tables = [
        "organisations", "organisation_uuids", "categories", "sites", "zones", "beacons",
        "gateways", "devices", "site_maps", "beacon_rotations",
    ]

    static let migration = Migrations.Migration(version: 19, name: "registry generation") { dialect in
        var statements = [
            "CREATE TABLE registry_generation (id BIGINT PRIMARY KEY, value BIGINT NOT NULL)",
            "INSERT INTO registry_generation (id, value) VALUES (1, 1)",
        ]
        switch dialect {
        case .sqlite:
            // SQLite has row triggers with one event each.
            for table in tables {
                for event in ["INSERT", "UPDATE", "DELETE"] {
                    statements.append("""
                        CREATE TRIGGER registry_generation_\(table)_\(event.lowercased()) AFTER \(event) ON \(table)
                        BEGIN UPDATE registry_generation SET value = value + 1 WHERE id = 1; END
                        """)
                }
            }
        case .postgres:
            // One bump per statement, however many rows it wrote; the notification lets other
            // instances learn of the change without asking.
            statements.append("""
                CREATE FUNCTION proxima_bump_registry_generation() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  UPDATE registry_generation SET value = value + 1 WHERE id = 1;
                  PERFORM pg_notify('proxima_registry', '');
                  RETURN NULL;
                END $$
                """)
            for table in tables {
                statements.append("""
                    CREATE TRIGGER registry_generation_\(table) AFTER INSERT OR UPDATE OR DELETE ON \(table)
                    FOR EACH STATEMENT EXECUTE FUNCTION proxima_bump_registry_generation()
                    """)
            }
        }
        return statements
    }

    /// The stored generation, as a query of its own or a subquery of another statement.
    static let valueQuery = "SELECT value FROM registry_generation WHERE id = 1"

    static let missingRow = RegistryError(.notFound, field: "registry_generation", "the registry generation row is missing")

    static func current(db: any SQLDatabase) async throws -> Int {
        guard let row = try await db.raw(SQLQueryString(valueQuery)).first() else { throw missingRow }
        return try row.int("value")
    }
}

extension Store {
    /// The registry generation now stored (moved by every registry write of any instance).
    public func registryGeneration() async throws -> Int {
        try await database.read { db in try await RegistryGeneration.current(db: db) }
    }
}
