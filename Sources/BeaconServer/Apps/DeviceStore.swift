import Foundation
import SQLKit

enum AppMigrations {
    /// Devices (each backed by a gateway record, so ingestion needs nothing new), messages of
    /// the day on zones and beacons, and the message delivered with an enter event.
    static let devicesAndMessages = Migrations.Migration(version: 6, name: "devices and messages of the day") { dialect in
        [
            """
            CREATE TABLE devices (id TEXT PRIMARY KEY REFERENCES gateways(id) ON DELETE CASCADE,
              site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE, name TEXT, anonymous BIGINT NOT NULL,
              consent_events BIGINT NOT NULL, consent_positions BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX devices_site ON devices (site_id)",
            """
            CREATE TABLE messages (id \(Migrations.serialKey(dialect)), site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
              zone_id BIGINT REFERENCES zones(id) ON DELETE CASCADE, beacon_id BIGINT REFERENCES beacons(id) ON DELETE CASCADE,
              format TEXT NOT NULL, body TEXT NOT NULL, schedule TEXT NOT NULL,
              created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX messages_zone ON messages (zone_id)",
            "CREATE INDEX messages_beacon ON messages (beacon_id)",
            "ALTER TABLE region_events ADD COLUMN message TEXT",
        ]
    }
}

extension Store {
    /// Registers a device of a site with its consent, and issues its token (shown once).
    public func registerDevice(_ new: NewDevice, limits: AppLimits = AppLimits(), now: Double = Date().timeIntervalSince1970) async throws -> RegisteredDevice {
        let anonymous = new.anonymous ?? false
        var name = new.name
        if anonymous {
            guard name == nil else { throw RegistryError(.invalid, field: "name", "an anonymous device has no name; leave name out") }
        } else {
            guard let given = name?.trimmingCharacters(in: .whitespaces), !given.isEmpty else {
                throw RegistryError(.invalid, field: "name", "expected a name, or \"anonymous\": true for a device without one")
            }
            guard given.count <= limits.deviceNameLength else {
                throw RegistryError(.invalid, field: "name", "expected at most \(limits.deviceNameLength) characters, found \(given.count)")
            }
            try NameText.check(given, field: "name")
            name = given
        }
        if new.consent.positions, !new.consent.events {
            throw RegistryError(.invalid, field: "consent.positions", "positions need events too: a device that shares where it is shares its events")
        }
        let id = UUID().uuidString.lowercased()
        let storedName = name
        return try await database.transaction { db in
            _ = try await Self.site(id: new.siteID, db: db)
            let count = try await db.raw("SELECT COUNT(*) AS n FROM devices WHERE site_id = \(bind: new.siteID)").first()?.int("n") ?? 0
            guard count < limits.devicesPerSite else {
                throw RegistryError(.exhausted, field: "siteID", "site \(new.siteID) has its limit of \(limits.devicesPerSite) devices; delete devices no longer used")
            }
            try await db.raw("""
                INSERT INTO gateways (id, name, site_id, created_at)
                VALUES (\(bind: id), \(bind: Device.gatewayName(id: id)), \(bind: new.siteID), \(bind: now))
                """).run()
            try await db.raw("""
                INSERT INTO devices (id, site_id, name, anonymous, consent_events, consent_positions, created_at)
                VALUES (\(bind: id), \(bind: new.siteID), \(bind: storedName), \(bind: anonymous ? 1 : 0),
                        \(bind: new.consent.events ? 1 : 0), \(bind: new.consent.positions ? 1 : 0), \(bind: now))
                """).run()
            let token = try await Self.insertToken(name: "device \(id)", role: .device, gatewayID: id, secret: nil, db: db)
            let device = Device(id: id, siteID: new.siteID, name: storedName, anonymous: anonymous, consent: new.consent, createdAt: now)
            return RegisteredDevice(device: device, token: token.token)
        }
    }

    static let deviceColumns = "id, site_id, name, anonymous, consent_events, consent_positions, created_at"

    static func decodeDevice(_ row: any SQLRow) throws -> Device {
        Device(id: try row.string("id"), siteID: try row.int("site_id"), name: try row.optionalString("name"),
               anonymous: try row.int("anonymous") != 0,
               consent: DeviceConsent(events: try row.int("consent_events") != 0, positions: try row.int("consent_positions") != 0),
               createdAt: try row.double("created_at"))
    }

    /// One page of the devices of a site, or of all sites, in id order after the cursor `after`
    /// (a device id), and whether more follow: a listing's cost is its page, however many
    /// devices the server holds.
    public func devices(siteID: Int? = nil, after: String? = nil, limit: Int = 1000) async throws -> (devices: [Device], more: Bool) {
        try await database.read { db in
            var query = SQLQueryString("SELECT \(unsafeRaw: Self.deviceColumns) FROM devices WHERE 1 = 1")
            if let siteID {
                _ = try await Self.site(id: siteID, db: db)
                query += " AND site_id = \(bind: siteID)"
            }
            if let after { query += " AND id > \(bind: after)" }
            query += " ORDER BY id LIMIT \(bind: limit + 1)"
            let devices = try await db.raw(query).all().map(Self.decodeDevice)
            return (Array(devices.prefix(limit)), devices.count > limit)
        }
    }

    public func device(id: String) async throws -> Device {
        try await database.read { db in
            guard let device = try await Self.device(id: id, db: db) else {
                throw RegistryError(.notFound, field: "id", "no device \(id.prefix(64))")
            }
            return device
        }
    }

    static func device(id: String, db: any SQLDatabase) async throws -> Device? {
        try await db.raw("SELECT \(unsafeRaw: deviceColumns) FROM devices WHERE id = \(bind: id)").first().map(decodeDevice)
    }

    /// Forgets a device and everything kept about it: its token, engine checkpoint, ranging
    /// state, events and outbox rows.
    public func deleteDevice(id: String) async throws {
        try await database.transaction { db in
            guard try await Self.device(id: id, db: db) != nil else {
                throw RegistryError(.notFound, field: "id", "no device \(id.prefix(64))")
            }
            try await Self.eraseHelperTraces(of: id, db: db)
            try await db.raw("DELETE FROM region_events WHERE gateway_id = \(bind: id)").run()
            try await db.raw("DELETE FROM ranging_state WHERE gateway_id = \(bind: id)").run()
            // Its batches' sightings, finished or still waiting for an after-commit observer.
            try await db.raw("DELETE FROM batch_outbox WHERE gateway_id = \(bind: id)").run()
            // Cascades to the token, the checkpoint rows and the device row.
            try await db.raw("DELETE FROM gateways WHERE id = \(bind: id)").run()
        }
    }

    /// A device that helped other visitors is named in their requests, in their change history
    /// and in the per-helper figures. Those rows are other people's, so they stay, with the
    /// helper made anonymous under a fresh random name (the site's totals are unchanged); the
    /// change history that quoted the helper is dropped.
    static func eraseHelperTraces(of deviceID: String, db: any SQLDatabase) async throws {
        let anonymous = "erased-" + UUID().uuidString.lowercased()
        try await db.raw("""
            UPDATE help_requests SET helper_id = \(bind: anonymous), helper_name = NULL, helper_device_id = NULL, helper_distance = NULL
            WHERE helper_device_id = \(bind: deviceID)
            """).run()
        try await db.raw("""
            UPDATE help_metrics SET helper_id = \(bind: anonymous), helper_name = NULL, helper_device_id = NULL
            WHERE helper_device_id = \(bind: deviceID)
            """).run()
        try await db.raw("DELETE FROM help_request_changes WHERE body LIKE \(bind: "%" + deviceID + "%")").run()
        // Staff's changes that named the device (a helper added, say) stay recorded, without it.
        try await db.raw("""
            UPDATE audit_log SET path = REPLACE(path, \(bind: deviceID), '{erased device}') WHERE path LIKE \(bind: "%" + deviceID + "%")
            """).run()
    }
}
