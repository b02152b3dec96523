import Foundation
import SQLKit

extension Store {
    static let checkinZoneColumns = "zone_id, site_id, dwell, absence, updated_at"

    static func decodeCheckinZone(_ row: any SQLRow) throws -> CheckinZone {
        CheckinZone(zoneID: try row.int("zone_id"), siteID: try row.int("site_id"), dwell: try row.double("dwell"),
                    absence: try row.double("absence"), updatedAt: try row.double("updated_at"))
    }

    /// Makes a zone a check-in zone, or changes its rule. Visits under way keep going under the
    /// new rule.
    public func setCheckinZone(zoneID: Int, rule: CheckinZoneRule, now: Double) async throws -> CheckinZone {
        guard QueueLimits.dwell.contains(rule.dwell) else {
            throw RegistryError(.invalid, field: "dwell", "expected seconds in \(Int(QueueLimits.dwell.lowerBound))…\(Int(QueueLimits.dwell.upperBound)), found \(rule.dwell)")
        }
        guard QueueLimits.absence.contains(rule.absence) else {
            throw RegistryError(.invalid, field: "absence", "expected seconds in \(Int(QueueLimits.absence.lowerBound))…\(Int(QueueLimits.absence.upperBound)), found \(rule.absence)")
        }
        return try await database.transaction { db in
            let siteID = try await Self.zoneSite(zoneID, field: "zoneID", db: db)
            let exists = try await db.raw("SELECT zone_id FROM checkin_zones WHERE zone_id = \(bind: zoneID)").first() != nil
            if !exists {
                let count = try await db.raw("SELECT COUNT(*) AS n FROM checkin_zones WHERE site_id = \(bind: siteID)").first()?.int("n") ?? 0
                guard count < QueueLimits.checkinZonesPerSite else {
                    throw RegistryError(.exhausted, field: "zoneID", "site \(siteID) has its limit of \(QueueLimits.checkinZonesPerSite) check-in zones")
                }
            }
            try await db.raw("""
                INSERT INTO checkin_zones (zone_id, site_id, dwell, absence, updated_at)
                VALUES (\(bind: zoneID), \(bind: siteID), \(bind: rule.dwell), \(bind: rule.absence), \(bind: now))
                ON CONFLICT (zone_id) DO UPDATE SET dwell = excluded.dwell, absence = excluded.absence, updated_at = excluded.updated_at
                """).run()
            return CheckinZone(zoneID: zoneID, siteID: siteID, dwell: rule.dwell, absence: rule.absence, updatedAt: now)
        }
    }

    public func checkinZones(siteID: Int?) async throws -> [CheckinZone] {
        try await database.read { db in
            var query = SQLQueryString("SELECT \(unsafeRaw: Self.checkinZoneColumns) FROM checkin_zones")
            if let siteID {
                _ = try await Self.site(id: siteID, db: db)
                query += " WHERE site_id = \(bind: siteID)"
            }
            query += " ORDER BY zone_id"
            return try await db.raw(query).all().map(Self.decodeCheckinZone)
        }
    }

    public func checkinZone(zoneID: Int) async throws -> CheckinZone {
        try await database.read { db in
            guard let row = try await db.raw("SELECT \(unsafeRaw: Self.checkinZoneColumns) FROM checkin_zones WHERE zone_id = \(bind: zoneID)").first() else {
                throw RegistryError(.notFound, field: "zoneID", "zone \(zoneID) is not a check-in zone")
            }
            return try Self.decodeCheckinZone(row)
        }
    }

    /// Stops check-ins in a zone; visits under way are forgotten, check-ins and counts stay.
    public func deleteCheckinZone(zoneID: Int) async throws {
        try await database.transaction { db in
            guard try await db.raw("SELECT zone_id FROM checkin_zones WHERE zone_id = \(bind: zoneID)").first() != nil else {
                throw RegistryError(.notFound, field: "zoneID", "zone \(zoneID) is not a check-in zone")
            }
            try await db.raw("DELETE FROM checkin_zones WHERE zone_id = \(bind: zoneID)").run()
            try await db.raw("DELETE FROM checkin_visits WHERE zone_id = \(bind: zoneID)").run()
        }
    }

    /// A device's latest check-ins (newest first, at most `limit`) and its count per zone.
    public func checkins(deviceID: String, limit: Int) async throws -> DeviceCheckins {
        try await database.read { db in
            guard try await Self.device(id: deviceID, db: db) != nil else {
                throw RegistryError(.notFound, field: "id", "no device \(deviceID.prefix(64))")
            }
            let entries = try await db.raw("""
                SELECT zone_id, visit_start, time FROM checkins WHERE device_id = \(bind: deviceID)
                ORDER BY time DESC, id DESC LIMIT \(unsafeRaw: String(limit))
                """).all().map { row in
                DeviceCheckins.Entry(zoneID: try row.int("zone_id"), visitStart: try row.double("visit_start"), time: try row.double("time"))
            }
            let loyalty = try await db.raw("""
                SELECT zone_id, count, last FROM checkin_loyalty WHERE device_id = \(bind: deviceID) ORDER BY zone_id
                LIMIT \(unsafeRaw: String(QueueLimits.checkinZonesPerSite))
                """).all().map { row in
                DeviceCheckins.Loyalty(zoneID: try row.int("zone_id"), count: try row.int("count"), last: try row.double("last"))
            }
            return DeviceCheckins(deviceID: deviceID, checkins: entries, loyalty: loyalty)
        }
    }
}
