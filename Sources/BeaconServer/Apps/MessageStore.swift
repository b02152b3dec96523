import BeaconKit
import Foundation
import SQLKit

extension Store {
    /// Checks and cleans a message before it is stored: text within its length, HTML within its
    /// size and sanitised, the schedule valid; refusals name the field.
    static func prepare(_ new: NewDayMessage, limits: AppLimits) throws -> (format: DayMessage.Format, body: String, removed: [String], schedule: MessageSchedule) {
        let format = new.format ?? .text
        let schedule = try (new.schedule ?? .always).validated(field: "schedule")
        guard !new.body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw RegistryError(.invalid, field: "body", "expected the message's words, found an empty body")
        }
        switch format {
        case .text:
            guard new.body.count <= limits.textMessageLength else {
                throw RegistryError(.invalid, field: "body", "expected at most \(limits.textMessageLength) characters of text, found \(new.body.count)")
            }
            if let control = new.body.unicodeScalars.first(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
                throw RegistryError(.invalid, field: "body", "expected text without control characters other than line breaks and tabs, found U+\(String(control.value, radix: 16, uppercase: true))")
            }
            return (format, new.body, [], schedule)
        case .html:
            guard new.body.utf8.count <= limits.htmlMessageBytes else {
                throw RegistryError(.invalid, field: "body", "expected at most \(limits.htmlMessageBytes) bytes of HTML, found \(new.body.utf8.count)")
            }
            let clean = HTMLSanitiser.sanitise(new.body)
            guard !clean.html.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw RegistryError(.invalid, field: "body", "nothing is left of the HTML after sanitising (left out: \(clean.removed.joined(separator: ", ")))")
            }
            return (format, clean.html, clean.removed, schedule)
        }
    }

    /// The site of the message's zone or beacon, refusing anything but exactly one target.
    static func target(of new: NewDayMessage, db: any SQLDatabase) async throws -> Int {
        switch (new.zoneID, new.beaconID) {
        case (let zoneID?, nil):
            guard let row = try await db.raw("SELECT site_id FROM zones WHERE id = \(bind: zoneID)").first() else {
                throw RegistryError(.notFound, field: "zoneID", "no zone \(zoneID)")
            }
            return try row.int("site_id")
        case (nil, let beaconID?):
            guard let row = try await db.raw("SELECT site_id FROM beacons WHERE id = \(bind: beaconID)").first() else {
                throw RegistryError(.notFound, field: "beaconID", "no beacon \(beaconID)")
            }
            return try row.int("site_id")
        case (nil, nil):
            throw RegistryError(.invalid, field: "zoneID", "expected a zoneID or a beaconID to attach the message to")
        case (_?, _?):
            throw RegistryError(.invalid, field: "beaconID", "expected a zoneID or a beaconID, not both")
        }
    }

    public func createMessage(_ new: NewDayMessage, limits: AppLimits = AppLimits(), now: Double = Date().timeIntervalSince1970) async throws -> SavedDayMessage {
        let prepared = try Self.prepare(new, limits: limits)
        let schedule = try ProximaJSON.text(prepared.schedule)
        return try await database.transaction { db in
            let siteID = try await Self.target(of: new, db: db)
            try await Self.requireRoom(for: new, except: nil, limits: limits, db: db)
            guard let row = try await db.raw("""
                INSERT INTO messages (site_id, zone_id, beacon_id, format, body, schedule, created_at, updated_at)
                VALUES (\(bind: siteID), \(bind: new.zoneID), \(bind: new.beaconID), \(bind: prepared.format.rawValue),
                        \(bind: prepared.body), \(bind: schedule), \(bind: now), \(bind: now))
                RETURNING id
                """).first() else {
                throw RegistryError(.invalid, field: "body", "the database returned no id for the new message")
            }
            let message = DayMessage(id: try row.int("id"), siteID: siteID, zoneID: new.zoneID, beaconID: new.beaconID, format: prepared.format,
                                     body: prepared.body, schedule: prepared.schedule, createdAt: now, updatedAt: now)
            return SavedDayMessage(message: message, removed: prepared.removed)
        }
    }

    /// Replaces a message's target, format, body and schedule.
    public func replaceMessage(id: Int, with new: NewDayMessage, limits: AppLimits = AppLimits(), now: Double = Date().timeIntervalSince1970) async throws -> SavedDayMessage {
        let prepared = try Self.prepare(new, limits: limits)
        let schedule = try ProximaJSON.text(prepared.schedule)
        return try await database.transaction { db in
            guard let existing = try await Self.message(id: id, db: db) else {
                throw RegistryError(.notFound, field: "id", "no message \(id)")
            }
            let siteID = try await Self.target(of: new, db: db)
            try await Self.requireRoom(for: new, except: id, limits: limits, db: db)
            try await db.raw("""
                UPDATE messages SET site_id = \(bind: siteID), zone_id = \(bind: new.zoneID), beacon_id = \(bind: new.beaconID),
                  format = \(bind: prepared.format.rawValue), body = \(bind: prepared.body), schedule = \(bind: schedule), updated_at = \(bind: now)
                WHERE id = \(bind: id)
                """).run()
            let message = DayMessage(id: id, siteID: siteID, zoneID: new.zoneID, beaconID: new.beaconID, format: prepared.format,
                                     body: prepared.body, schedule: prepared.schedule, createdAt: existing.createdAt, updatedAt: now)
            return SavedDayMessage(message: message, removed: prepared.removed)
        }
    }

    private static func requireRoom(for new: NewDayMessage, except id: Int?, limits: AppLimits, db: any SQLDatabase) async throws {
        let (column, field, target) = if let zoneID = new.zoneID { ("zone_id", "zoneID", zoneID) } else { ("beacon_id", "beaconID", new.beaconID ?? 0) }
        var query = SQLQueryString("SELECT COUNT(*) AS n FROM messages WHERE \(unsafeRaw: column) = \(bind: target)")
        if let id { query += " AND id <> \(bind: id)" }
        let count = try await db.raw(query).first()?.int("n") ?? 0
        guard count < limits.messagesPerTarget else {
            throw RegistryError(.exhausted, field: field, "\(field == "zoneID" ? "zone" : "beacon") \(target) already has its limit of \(limits.messagesPerTarget) messages")
        }
    }

    static let messageColumns = "id, site_id, zone_id, beacon_id, format, body, schedule, created_at, updated_at"

    static func decodeMessage(_ row: any SQLRow) throws -> DayMessage {
        let formatText = try row.string("format")
        guard let format = DayMessage.Format(rawValue: formatText) else {
            throw RegistryError(.invalid, field: "format", "stored message format '\(formatText)' is not text or html")
        }
        let schedule = try JSONDecoder().decode(MessageSchedule.self, from: Data(try row.string("schedule").utf8))
        return DayMessage(id: try row.int("id"), siteID: try row.int("site_id"), zoneID: try row.optionalInt("zone_id"),
                          beaconID: try row.optionalInt("beacon_id"), format: format, body: try row.string("body"), schedule: schedule,
                          createdAt: try row.double("created_at"), updatedAt: try row.double("updated_at"))
    }

    static func message(id: Int, db: any SQLDatabase) async throws -> DayMessage? {
        try await db.raw("SELECT \(unsafeRaw: messageColumns) FROM messages WHERE id = \(bind: id)").first().map(decodeMessage)
    }

    public func message(id: Int) async throws -> DayMessage {
        try await database.read { db in
            guard let message = try await Self.message(id: id, db: db) else { throw RegistryError(.notFound, field: "id", "no message \(id)") }
            return message
        }
    }

    /// Messages of a site, a zone or a beacon (any combination), in id order.
    public func messages(siteID: Int? = nil, zoneID: Int? = nil, beaconID: Int? = nil) async throws -> [DayMessage] {
        try await database.read { db in
            var query = SQLQueryString("SELECT \(unsafeRaw: Self.messageColumns) FROM messages WHERE 1 = 1")
            if let siteID { query += " AND site_id = \(bind: siteID)" }
            if let zoneID { query += " AND zone_id = \(bind: zoneID)" }
            if let beaconID { query += " AND beacon_id = \(bind: beaconID)" }
            query += " ORDER BY id"
            return try await db.raw(query).all().map(Self.decodeMessage)
        }
    }

    public func deleteMessage(id: Int) async throws {
        try await database.transaction { db in
            guard try await Self.message(id: id, db: db) != nil else { throw RegistryError(.notFound, field: "id", "no message \(id)") }
            try await db.raw("DELETE FROM messages WHERE id = \(bind: id)").run()
        }
    }

    /// The message for an identity at `time`, with the identity's meaning.
    public func messageLookup(_ identity: BeaconIdentity, at time: Double) async throws -> MessageLookup {
        try await database.read { db in
            let resolved = try await Self.resolve(identity, db: db)
            let message = try await Self.currentMessage(for: identity, at: time, db: db)
            return MessageLookup(uuid: identity.uuid, major: identity.major, minor: identity.minor, label: resolved?.label, message: message?.delivered)
        }
    }

    /// The message that applies to a beacon identity at `time`: among those whose schedule
    /// applies, one attached to the deployed beacon wins over one attached to its zone (the
    /// more particular place); among equals, the one changed last.
    static func currentMessage(for identity: BeaconIdentity, at time: Double, db: any SQLDatabase) async throws -> DayMessage? {
        guard let site = try await db.raw("SELECT id FROM sites WHERE uuid = \(bind: identity.uuid.uuidString) AND major = \(bind: Int(identity.major))").first() else {
            return nil
        }
        let siteID = try site.int("id")
        let zoneID = try await db.raw("SELECT id FROM zones WHERE site_id = \(bind: siteID) AND minor = \(bind: Int(identity.minor))").first()?.int("id")
        let beaconIDs = try await db.raw("""
            SELECT id FROM beacons WHERE uuid = \(bind: identity.uuid.uuidString) AND major = \(bind: Int(identity.major))
              AND minor = \(bind: Int(identity.minor)) AND state = 'deployed'
            """).all().map { try $0.int("id") }
        guard zoneID != nil || !beaconIDs.isEmpty else { return nil }
        var query = SQLQueryString("SELECT \(unsafeRaw: messageColumns) FROM messages WHERE zone_id = \(bind: zoneID ?? -1)")
        if !beaconIDs.isEmpty {
            query += " OR beacon_id IN (" + SQLQueryString(beaconIDs.map { String($0) }.joined(separator: ", ")) + ")"
        }
        let candidates = try await db.raw(query).all().map(decodeMessage).filter { $0.schedule.applies(at: time) }
        return candidates.max { a, b in
            ((a.beaconID != nil ? 1 : 0), a.updatedAt, a.id) < ((b.beaconID != nil ? 1 : 0), b.updatedAt, b.id)
        }
    }
}

enum ProximaJSON {
    static func text(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
