import Foundation
import SQLKit

extension Store {
    static func checkOffer(_ new: NewOffer, limits: OfferLimits) throws {
        let title = new.title.trimmingCharacters(in: .whitespaces)
        guard !title.isEmpty, title.count <= limits.titleLength else {
            throw RegistryError(.invalid, field: "title", "expected 1…\(limits.titleLength) characters, found \(title.count)")
        }
        try NameText.check(title, field: "title")
        guard !new.body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, new.body.count <= limits.bodyLength else {
            throw RegistryError(.invalid, field: "body", "expected 1…\(limits.bodyLength) characters, found \(new.body.count)")
        }
        if let control = new.body.unicodeScalars.first(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
            throw RegistryError(.invalid, field: "body", "expected text without control characters other than line breaks and tabs, found U+\(String(control.value, radix: 16, uppercase: true))")
        }
    }

    /// The site of the offer's zone, refusing a full zone.
    static func offerZoneSite(_ new: NewOffer, except id: Int?, limits: OfferLimits, db: any SQLDatabase) async throws -> Int {
        guard let row = try await db.raw("SELECT site_id FROM zones WHERE id = \(bind: new.zoneID)").first() else {
            throw RegistryError(.notFound, field: "zoneID", "no zone \(new.zoneID)")
        }
        let count = try await db.raw("SELECT COUNT(*) AS n FROM offers WHERE zone_id = \(bind: new.zoneID) AND id <> \(bind: id ?? -1)").first()?.int("n") ?? 0
        guard count < limits.offersPerZone else {
            throw RegistryError(.exhausted, field: "zoneID", "zone \(new.zoneID) has its limit of \(limits.offersPerZone) offers")
        }
        return try row.int("site_id")
    }

    public func createOffer(_ new: NewOffer, limits: OfferLimits = OfferLimits(), now: Double = Date().timeIntervalSince1970) async throws -> Offer {
        try Self.checkOffer(new, limits: limits)
        return try await database.transaction { db in
            let siteID = try await Self.offerZoneSite(new, except: nil, limits: limits, db: db)
            let title = new.title.trimmingCharacters(in: .whitespaces)
            guard let row = try await db.raw("""
                INSERT INTO offers (site_id, zone_id, title, body, created_at, updated_at)
                VALUES (\(bind: siteID), \(bind: new.zoneID), \(bind: title), \(bind: new.body), \(bind: now), \(bind: now)) RETURNING id
                """).first() else { throw RegistryError(.invalid, field: "title", "the database returned no id for the new offer") }
            return Offer(id: try row.int("id"), siteID: siteID, zoneID: new.zoneID, title: title, body: new.body, createdAt: now, updatedAt: now)
        }
    }

    public func replaceOffer(id: Int, with new: NewOffer, limits: OfferLimits = OfferLimits(), now: Double = Date().timeIntervalSince1970) async throws -> Offer {
        try Self.checkOffer(new, limits: limits)
        return try await database.transaction { db in
            guard let existing = try await Self.offer(id: id, db: db) else { throw RegistryError(.notFound, field: "id", "no offer \(id)") }
            let siteID = try await Self.offerZoneSite(new, except: id, limits: limits, db: db)
            let title = new.title.trimmingCharacters(in: .whitespaces)
            try await db.raw("""
                UPDATE offers SET site_id = \(bind: siteID), zone_id = \(bind: new.zoneID), title = \(bind: title), body = \(bind: new.body),
                updated_at = \(bind: now) WHERE id = \(bind: id)
                """).run()
            return Offer(id: id, siteID: siteID, zoneID: new.zoneID, title: title, body: new.body, createdAt: existing.createdAt, updatedAt: now)
        }
    }

    static let offerColumns = "id, site_id, zone_id, title, body, created_at, updated_at"

    static func decodeOffer(_ row: any SQLRow) throws -> Offer {
        Offer(id: try row.int("id"), siteID: try row.int("site_id"), zoneID: try row.int("zone_id"), title: try row.string("title"),
              body: try row.string("body"), createdAt: try row.double("created_at"), updatedAt: try row.double("updated_at"))
    }

    static func offer(id: Int, db: any SQLDatabase) async throws -> Offer? {
        try await db.raw("SELECT \(unsafeRaw: offerColumns) FROM offers WHERE id = \(bind: id)").first().map(decodeOffer)
    }

    public func offer(id: Int) async throws -> Offer {
        try await database.read { db in
            guard let offer = try await Self.offer(id: id, db: db) else { throw RegistryError(.notFound, field: "id", "no offer \(id)") }
            return offer
        }
    }

    /// A site's offers, or one zone's, oldest first.
    public func offers(siteID: Int?, zoneID: Int?) async throws -> [Offer] {
        try await database.read { db in
            var query = SQLQueryString("SELECT \(unsafeRaw: Self.offerColumns) FROM offers WHERE 1 = 1")
            if let siteID {
                _ = try await Self.site(id: siteID, db: db)
                query += " AND site_id = \(bind: siteID)"
            }
            if let zoneID { query += " AND zone_id = \(bind: zoneID)" }
            query += " ORDER BY id LIMIT 10000"
            return try await db.raw(query).all().map(Self.decodeOffer)
        }
    }

    public func deleteOffer(id: Int) async throws {
        try await database.transaction { db in
            guard try await Self.offer(id: id, db: db) != nil else { throw RegistryError(.notFound, field: "id", "no offer \(id)") }
            try await db.raw("DELETE FROM offers WHERE id = \(bind: id)").run()
        }
    }

    // MARK: Settings

    public func offerSettings(siteID: Int) async throws -> SiteOfferSettings {
        try await database.read { db in
            _ = try await Self.site(id: siteID, db: db)
            return try await Self.offerSettings(siteID: siteID, db: db)
        }
    }

    static func offerSettings(siteID: Int, db: any SQLDatabase) async throws -> SiteOfferSettings {
        guard let row = try await db.raw("SELECT settings, delivered, refused FROM offer_settings WHERE site_id = \(bind: siteID)").first() else {
            return SiteOfferSettings(siteID: siteID, settings: .standard, delivered: 0, refused: 0)
        }
        return SiteOfferSettings(siteID: siteID, settings: try JSONDecoder().decode(OfferSettings.self, from: Data(try row.string("settings").utf8)),
                                 delivered: try row.int("delivered"), refused: try row.int("refused"))
    }

    public func setOfferSettings(siteID: Int, _ settings: OfferSettings) async throws -> SiteOfferSettings {
        guard (1...100).contains(settings.perWindow) else {
            throw RegistryError(.invalid, field: "perWindow", "expected 1…100 offers per window, found \(settings.perWindow)")
        }
        guard settings.window.isFinite, settings.window >= 1, settings.window <= 7 * 86_400 else {
            throw RegistryError(.invalid, field: "window", "expected seconds in [1, 604800], found \(settings.window)")
        }
        guard settings.reach.isFinite, settings.reach > 0, settings.reach <= 100 else {
            throw RegistryError(.invalid, field: "reach", "expected metres in (0, 100], found \(settings.reach)")
        }
        guard (1...10).contains(settings.maxChoices) else {
            throw RegistryError(.invalid, field: "maxChoices", "expected 1…10 choices, found \(settings.maxChoices)")
        }
        guard settings.freshness.isFinite, settings.freshness > 0, settings.freshness <= 300 else {
            throw RegistryError(.invalid, field: "freshness", "expected seconds in (0, 300], found \(settings.freshness)")
        }
        let text = try ProximaJSON.text(settings)
        return try await database.transaction { db in
            _ = try await Self.site(id: siteID, db: db)
            try await db.raw("""
                INSERT INTO offer_settings (site_id, settings, delivered, refused) VALUES (\(bind: siteID), \(bind: text), 0, 0)
                ON CONFLICT (site_id) DO UPDATE SET settings = excluded.settings
                """).run()
            return try await Self.offerSettings(siteID: siteID, db: db)
        }
    }

    /// A device's recent offers, newest first, and its counts.
    public func deviceOffers(deviceID: String) async throws -> DeviceOffers {
        try await database.read { db in
            let rows = try await db.raw("SELECT id, time, choices FROM offer_deliveries WHERE device_id = \(bind: deviceID) ORDER BY id DESC LIMIT \(bind: OfferLimits().deliveriesKept)").all()
            let deliveries = try rows.map { row in
                OfferDelivery(id: try row.int("id"), time: try row.double("time"),
                              choices: try JSONDecoder().decode([OfferOption].self, from: Data(try row.string("choices").utf8)))
            }
            let counts = try await db.raw("SELECT delivered, refused FROM offer_devices WHERE device_id = \(bind: deviceID)").first()
            return DeviceOffers(deliveries: deliveries, delivered: try counts?.int("delivered") ?? 0, refused: try counts?.int("refused") ?? 0)
        }
    }
}
