import BeaconKit
import Foundation
import SQLKit

/// What the pass web service keeps: devices registered for passes, the updated serials they
/// ask for, new versions when a carried beacon changes, and the pushes that announce them.
extension Store {
    // MARK: Registrations

    /// Registers a device for a pass's updates; true when new, false when it was registered
    /// already (its push token is refreshed).
    func registerDevice(_ registration: PassRegistration, limits: PassLimits = PassLimits(), now: Double) async throws -> Bool {
        try await database.transaction { db in
            let existing = try await db.raw("""
                SELECT push_token FROM pass_registrations WHERE device_library_identifier = \(bind: registration.deviceLibraryIdentifier)
                AND pass_type_identifier = \(bind: registration.passTypeIdentifier) AND serial = \(bind: registration.serial)
                """).first()
            if existing != nil {
                try await db.raw("""
                    UPDATE pass_registrations SET push_token = \(bind: registration.pushToken)
                    WHERE device_library_identifier = \(bind: registration.deviceLibraryIdentifier)
                    AND pass_type_identifier = \(bind: registration.passTypeIdentifier) AND serial = \(bind: registration.serial)
                    """).run()
                return false
            }
            let count = try await db.raw("SELECT COUNT(*) AS n FROM pass_registrations WHERE serial = \(bind: registration.serial)").first()?.int("n") ?? 0
            guard count < limits.registrationsPerPass else {
                throw RegistryError(.exhausted, field: "deviceLibraryIdentifier",
                    "pass \(registration.serial) has its limit of \(limits.registrationsPerPass) registered devices")
            }
            try await db.raw("""
                INSERT INTO pass_registrations (device_library_identifier, pass_type_identifier, serial, push_token, created_at)
                VALUES (\(bind: registration.deviceLibraryIdentifier), \(bind: registration.passTypeIdentifier), \(bind: registration.serial),
                        \(bind: registration.pushToken), \(bind: now))
                """).run()
            return true
        }
    }

    /// Removes a device's registration for a pass; false when there was none.
    func unregisterDevice(deviceLibraryIdentifier: String, passTypeIdentifier: String, serial: String) async throws -> Bool {
        try await database.transaction { db in
            let rows = try await db.raw("""
                DELETE FROM pass_registrations WHERE device_library_identifier = \(bind: deviceLibraryIdentifier)
                AND pass_type_identifier = \(bind: passTypeIdentifier) AND serial = \(bind: serial) RETURNING serial
                """).all()
            return !rows.isEmpty
        }
    }

    /// The serials of the device's registered passes updated after `since` (all of them when
    /// nil), and the tag to ask from next time; nil when none.
    func updatedSerials(deviceLibraryIdentifier: String, passTypeIdentifier: String, since: Int?) async throws -> (serials: [String], lastUpdated: Int)? {
        try await database.read { db in
            let rows = try await db.raw("""
                SELECT p.serial, p.update_tag FROM passes p JOIN pass_registrations r ON r.serial = p.serial
                WHERE r.device_library_identifier = \(bind: deviceLibraryIdentifier) AND r.pass_type_identifier = \(bind: passTypeIdentifier)
                AND p.update_tag > \(bind: since ?? -1) ORDER BY p.update_tag, p.serial LIMIT 1000
                """).all()
            guard !rows.isEmpty else { return nil }
            let serials = try rows.map { try $0.string("serial") }
            let last = try rows.map { try $0.int("update_tag") }.max() ?? 0
            return (serials, last)
        }
    }

    func registrations(serial: String) async throws -> [PassRegistration] {
        try await database.read { db in
            try await db.raw("""
                SELECT device_library_identifier, pass_type_identifier, serial, push_token FROM pass_registrations
                WHERE serial = \(bind: serial) ORDER BY device_library_identifier
                """).all().map { row in
                PassRegistration(deviceLibraryIdentifier: try row.string("device_library_identifier"),
                                 passTypeIdentifier: try row.string("pass_type_identifier"),
                                 serial: try row.string("serial"), pushToken: try row.string("push_token"))
            }
        }
    }

    // MARK: New versions

    /// Gives every pass that carries `old` a new version carrying `new` instead: its beacons
    /// change, its version and update tag advance, and a push is queued for each device
    /// registered for it. Returns the serials re-issued.
    ///
    /// `updatedAt` moves on by at least a whole second, because Last-Modified and
    /// If-Modified-Since count whole seconds: two versions in one second would look the same.
    static func reissuePasses(carrying old: BeaconIdentity, as new: BeaconIdentity, now: Double, db: any SQLDatabase) async throws -> [String] {
        let rows = try await db.raw("""
            SELECT DISTINCT b.serial, p.updated_at FROM pass_beacons b JOIN passes p ON p.serial = b.serial
            WHERE b.uuid = \(bind: old.uuid.uuidString) AND b.major = \(bind: Int(old.major)) AND b.minor = \(bind: Int(old.minor))
            ORDER BY b.serial
            """).all()
        var serials: [String] = []
        for row in rows {
            let serial = try row.string("serial")
            let updatedAt = max(now, (try row.double("updated_at")).rounded(.down) + 1)
            try await db.raw("""
                UPDATE pass_beacons SET uuid = \(bind: new.uuid.uuidString), major = \(bind: Int(new.major)), minor = \(bind: Int(new.minor))
                WHERE serial = \(bind: serial) AND uuid = \(bind: old.uuid.uuidString) AND major = \(bind: Int(old.major)) AND minor = \(bind: Int(old.minor))
                """).run()
            let tag = try await nextPassUpdateTag(db: db)
            try await db.raw("""
                UPDATE passes SET version = version + 1, update_tag = \(bind: tag), updated_at = \(bind: updatedAt) WHERE serial = \(bind: serial)
                """).run()
            try await db.raw("""
                INSERT INTO pass_pushes (push_token, pass_type_identifier, queued_at, attempts)
                SELECT push_token, pass_type_identifier, \(bind: now), 0 FROM pass_registrations WHERE serial = \(bind: serial)
                ON CONFLICT (push_token, pass_type_identifier) DO NOTHING
                """).run()
            serials.append(serial)
        }
        return serials
    }

    /// Moves a zone (and its beacons) to another minor of its category, as when a spoofed or
    /// replaced beacon gets a fresh identity, and re-issues the passes that carried the old one.
    public func renumberZone(id: Int, minor: UInt16, now: Double = Date().timeIntervalSince1970) async throws -> ZoneRenumbered {
        try await database.transaction { db in
            guard let row = try await db.raw("SELECT id, site_id, minor, label, category, x, y FROM zones WHERE id = \(bind: id)").first() else {
                throw RegistryError(.notFound, field: "id", "no zone \(id)")
            }
            var zone = try Self.decodeZone(row)
            let site = try await Self.site(id: zone.siteID, db: db)
            let range = try plan.minors(ofCategory: zone.category)
            guard range.contains(Int(minor)) else {
                throw RegistryError(.invalid, field: "minor", "expected a minor of category \(zone.category) in \(range.lowerBound)…\(range.upperBound), found \(minor)")
            }
            guard minor != zone.minor else {
                throw RegistryError(.invalid, field: "minor", "zone \(id) already has minor \(minor)")
            }
            if try await db.raw("SELECT id FROM zones WHERE site_id = \(bind: site.id) AND minor = \(bind: Int(minor))").first() != nil {
                throw RegistryError(.conflict, field: "minor", "site \(site.id) already has a zone with minor \(minor)")
            }
            try await Self.requireIdentityFree(uuid: site.uuid, major: site.major, minor: minor, except: nil, db: db)
            let old = BeaconIdentity(uuid: site.uuid, major: site.major, minor: zone.minor)
            let new = BeaconIdentity(uuid: site.uuid, major: site.major, minor: minor)
            try await db.raw("UPDATE zones SET minor = \(bind: Int(minor)) WHERE id = \(bind: id)").run()
            try await db.raw("UPDATE beacons SET minor = \(bind: Int(minor)) WHERE site_id = \(bind: site.id) AND minor = \(bind: Int(zone.minor))").run()
            zone.minor = minor
            let serials = try await Self.reissuePasses(carrying: old, as: new, now: now, db: db)
            return ZoneRenumbered(zone: zone, reissuedPasses: serials)
        }
    }

    // MARK: Pushes

    func queuedPushes(limit: Int = 100) async throws -> [QueuedPush] {
        try await database.read { db in
            try await db.raw("SELECT id, push_token, pass_type_identifier, attempts FROM pass_pushes ORDER BY id LIMIT \(bind: limit)").all().map { row in
                QueuedPush(id: try row.int("id"), pushToken: try row.string("push_token"),
                           passTypeIdentifier: try row.string("pass_type_identifier"), attempts: try row.int("attempts"))
            }
        }
    }

    /// Records what became of a push: sent (or given up) removes it, a failure counts an attempt.
    func finishPush(id: Int, remove: Bool) async throws {
        try await database.transaction { db in
            if remove {
                try await db.raw("DELETE FROM pass_pushes WHERE id = \(bind: id)").run()
            } else {
                try await db.raw("UPDATE pass_pushes SET attempts = attempts + 1 WHERE id = \(bind: id)").run()
            }
        }
    }

    /// APNs said the token is no longer valid (410): the device's registrations go, as Apple asks.
    func forgetPushToken(_ token: String) async throws {
        try await database.transaction { db in
            try await db.raw("DELETE FROM pass_registrations WHERE push_token = \(bind: token)").run()
            try await db.raw("DELETE FROM pass_pushes WHERE push_token = \(bind: token)").run()
        }
    }
}
