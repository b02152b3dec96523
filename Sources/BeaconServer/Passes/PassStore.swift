import BeaconKit
import Foundation
import SQLKit

extension Store {
    // MARK: Templates

    public func setPassTemplate(_ template: PassTemplate) async throws -> PassTemplate {
        let images = try ProximaJSON.text(template.images.mapValues { $0.base64EncodedString() })
        let passText = String(decoding: template.passJSON, as: UTF8.self)
        return try await database.transaction { db in
            _ = try await Self.site(id: template.siteID, db: db)
            try await db.raw("""
                INSERT INTO pass_templates (site_id, pass_json, images, updated_at)
                VALUES (\(bind: template.siteID), \(bind: passText), \(bind: images), \(bind: template.updatedAt))
                ON CONFLICT (site_id) DO UPDATE SET pass_json = excluded.pass_json, images = excluded.images, updated_at = excluded.updated_at
                """).run()
            return template
        }
    }

    public func passTemplate(siteID: Int) async throws -> PassTemplate {
        try await database.read { db in
            _ = try await Self.site(id: siteID, db: db)
            guard let template = try await Self.passTemplate(siteID: siteID, db: db) else {
                throw RegistryError(.notFound, field: "id", "site \(siteID) has no pass template; PUT /v1/sites/\(siteID)/pass-template first")
            }
            return template
        }
    }

    static func passTemplate(siteID: Int, db: any SQLDatabase) async throws -> PassTemplate? {
        guard let row = try await db.raw("SELECT pass_json, images, updated_at FROM pass_templates WHERE site_id = \(bind: siteID)").first() else {
            return nil
        }
        let encoded = try JSONDecoder().decode([String: String].self, from: Data(try row.string("images").utf8))
        return PassTemplate(siteID: siteID, passJSON: Data(try row.string("pass_json").utf8),
                            images: encoded.compactMapValues { Data(base64Encoded: $0) }, updatedAt: try row.double("updated_at"))
    }

    // MARK: Issuing

    /// The beacons a new pass carries: the named zones', or the site's entrance zones (zones of
    /// a category named "Entrance") when none are named; at most Wallet's 10.
    public func passBeacons(siteID: Int, zones requested: [Int]?) async throws -> [CarriedBeacon] {
        let limit = 10
        if let requested {
            guard !requested.isEmpty else { throw RegistryError(.invalid, field: "zones", "expected 1…\(limit) zone ids, found none") }
            guard requested.count <= limit else {
                throw RegistryError(.invalid, field: "zones", "a pass carries at most \(limit) beacons (Wallet ignores the rest); found \(requested.count) zones")
            }
        }
        return try await database.read { db in
            let site = try await Self.site(id: siteID, db: db)
            let rows = try await db.raw("""
                SELECT z.id, z.site_id, z.minor, z.label, z.category, z.x, z.y, c.name AS category_name
                FROM zones z LEFT JOIN categories c ON c.code = z.category WHERE z.site_id = \(bind: siteID) ORDER BY z.minor
                """).all()
            var zones: [Int: (zone: Zone, category: String?)] = [:]
            for row in rows {
                let zone = try Self.decodeZone(row)
                zones[zone.id] = (zone, try row.optionalString("category_name"))
            }
            let chosen: [Zone]
            if let requested {
                var seen = Set<Int>()
                chosen = try requested.enumerated().map { index, id in
                    guard let entry = zones[id] else {
                        throw RegistryError(.invalid, field: "zones[\(index)]", "expected a zone of site \(siteID), found \(id)")
                    }
                    guard seen.insert(id).inserted else {
                        throw RegistryError(.invalid, field: "zones[\(index)]", "zone \(id) is named twice")
                    }
                    return entry.zone
                }
            } else {
                let entrances = zones.values.filter { $0.category?.lowercased() == "entrance" }.map(\.zone).sorted { $0.minor < $1.minor }
                guard !entrances.isEmpty else {
                    throw RegistryError(.invalid, field: "zones",
                        "site \(siteID) has no entrance zone (a zone whose category is named Entrance); name the zones the pass should carry")
                }
                chosen = Array(entrances.prefix(limit))
            }
            return chosen.map { CarriedBeacon(uuid: site.uuid, major: site.major, minor: $0.minor, relevantText: "\(site.name) – \($0.label)") }
        }
    }

    /// Stores a newly issued pass at version 1 with the next update tag.
    func insertPass(_ stored: StoredPass, limits: PassLimits = PassLimits()) async throws -> IssuedPass {
        try await database.transaction { db in
            let pass = stored.pass
            let count = try await db.raw("SELECT COUNT(*) AS n FROM passes WHERE site_id = \(bind: pass.siteID)").first()?.int("n") ?? 0
            guard count < limits.passesPerSite else {
                throw RegistryError(.exhausted, field: "id", "site \(pass.siteID) has its limit of \(limits.passesPerSite) passes")
            }
            var issued = pass
            issued.updateTag = try await Self.nextPassUpdateTag(db: db)
            try await db.raw("""
                INSERT INTO passes (serial, site_id, pass_type_identifier, visitor, authentication_token, version, update_tag, created_at, updated_at)
                VALUES (\(bind: issued.serial), \(bind: issued.siteID), \(bind: issued.passTypeIdentifier), \(bind: issued.visitor),
                        \(bind: stored.authenticationToken), \(bind: issued.version), \(bind: issued.updateTag), \(bind: issued.createdAt), \(bind: issued.updatedAt))
                """).run()
            for (position, beacon) in issued.beacons.enumerated() {
                try await db.raw("""
                    INSERT INTO pass_beacons (serial, position, uuid, major, minor, relevant_text)
                    VALUES (\(bind: issued.serial), \(bind: position), \(bind: beacon.uuid.uuidString), \(bind: Int(beacon.major)),
                            \(bind: Int(beacon.minor)), \(bind: beacon.relevantText))
                    """).run()
            }
            return issued
        }
    }

    static func nextPassUpdateTag(db: any SQLDatabase) async throws -> Int {
        guard let row = try await db.raw("UPDATE pass_update_counter SET value = value + 1 WHERE id = 1 RETURNING value").first() else {
            throw RegistryError(.invalid, field: "updateTag", "the pass update counter is missing")
        }
        return try row.int("value")
    }

    static let passColumns = "serial, site_id, pass_type_identifier, visitor, authentication_token, version, update_tag, created_at, updated_at"

    static func decodeStoredPass(_ row: any SQLRow, db: any SQLDatabase) async throws -> StoredPass {
        let serial = try row.string("serial")
        let beacons = try await db.raw("""
            SELECT uuid, major, minor, relevant_text FROM pass_beacons WHERE serial = \(bind: serial) ORDER BY position
            """).all().map { beacon in
            CarriedBeacon(uuid: try beacon.uuid("uuid"), major: try beacon.uint16("major"), minor: try beacon.uint16("minor"),
                       relevantText: try beacon.string("relevant_text"))
        }
        let pass = IssuedPass(serial: serial, siteID: try row.int("site_id"), passTypeIdentifier: try row.string("pass_type_identifier"),
                              visitor: try row.string("visitor"), version: try row.int("version"), updateTag: try row.int("update_tag"),
                              createdAt: try row.double("created_at"), updatedAt: try row.double("updated_at"), beacons: beacons)
        return StoredPass(pass: pass, authenticationToken: try row.string("authentication_token"))
    }

    func storedPass(serial: String) async throws -> StoredPass? {
        try await database.read { db in
            guard let row = try await db.raw("SELECT \(unsafeRaw: Self.passColumns) FROM passes WHERE serial = \(bind: serial)").first() else {
                return nil
            }
            return try await Self.decodeStoredPass(row, db: db)
        }
    }

    /// One pass of a site, as the API describes it (without its token).
    public func issuedPass(siteID: Int, serial: String) async throws -> IssuedPass {
        guard let stored = try await storedPass(serial: serial), stored.pass.siteID == siteID else {
            throw RegistryError(.notFound, field: "serial", "site \(siteID) has no pass \(serial.prefix(80))")
        }
        return stored.pass
    }

    /// A site's passes, newest first, at most `limit`.
    public func issuedPasses(siteID: Int, limit: Int = 500) async throws -> [IssuedPass] {
        try await database.read { db in
            _ = try await Self.site(id: siteID, db: db)
            let rows = try await db.raw("""
                SELECT \(unsafeRaw: Self.passColumns) FROM passes WHERE site_id = \(bind: siteID) ORDER BY created_at DESC, serial LIMIT \(bind: max(1, min(limit, 500)))
                """).all()
            var passes: [IssuedPass] = []
            for row in rows { passes.append(try await Self.decodeStoredPass(row, db: db).pass) }
            return passes
        }
    }
}
