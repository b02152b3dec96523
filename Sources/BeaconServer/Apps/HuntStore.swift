import Foundation
import SQLKit

extension Store {
    /// Creates a hunt after checking every field; refusals name the field.
    public func createHunt(_ new: NewHunt, limits: HuntLimits = HuntLimits(), now: Double = Date().timeIntervalSince1970) async throws -> Hunt {
        let name = new.name.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.count <= limits.nameLength else {
            throw RegistryError(.invalid, field: "name", "expected 1…\(limits.nameLength) characters, found \(name.count)")
        }
        try NameText.check(name, field: "name")
        let reward = new.reward.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reward.isEmpty, reward.count <= limits.rewardLength else {
            throw RegistryError(.invalid, field: "reward", "expected 1…\(limits.rewardLength) characters, found \(reward.count)")
        }
        try NameText.check(reward, field: "reward")
        guard (1...limits.stampsPerHunt).contains(new.stampZoneIDs.count) else {
            throw RegistryError(.invalid, field: "stampZoneIDs", "expected 1…\(limits.stampsPerHunt) stamps, found \(new.stampZoneIDs.count)")
        }
        if let repeated = new.stampZoneIDs.indices.first(where: { new.stampZoneIDs[..<$0].contains(new.stampZoneIDs[$0]) }) {
            throw RegistryError(.invalid, field: "stampZoneIDs[\(repeated)]", "zone \(new.stampZoneIDs[repeated]) is a stamp already")
        }
        guard new.timeLimit.isFinite, new.timeLimit > 0, new.timeLimit <= 7 * 86_400 else {
            throw RegistryError(.invalid, field: "timeLimit", "expected seconds in (0, 604800], found \(new.timeLimit)")
        }
        let maxSpeed = new.maxSpeed ?? 3
        guard maxSpeed.isFinite, maxSpeed >= 0.5, maxSpeed <= 15 else {
            throw RegistryError(.invalid, field: "maxSpeed", "expected metres per second in [0.5, 15], found \(maxSpeed)")
        }
        let reach = new.stampReach ?? 10
        guard reach.isFinite, reach >= 0, reach <= 100 else {
            throw RegistryError(.invalid, field: "stampReach", "expected metres in [0, 100], found \(reach)")
        }
        return try await database.transaction { db in
            _ = try await Self.site(id: new.siteID, db: db)
            for (index, zoneID) in new.stampZoneIDs.enumerated() {
                guard let row = try await db.raw("SELECT site_id FROM zones WHERE id = \(bind: zoneID)").first() else {
                    throw RegistryError(.notFound, field: "stampZoneIDs[\(index)]", "no zone \(zoneID)")
                }
                guard try row.int("site_id") == new.siteID else {
                    throw RegistryError(.invalid, field: "stampZoneIDs[\(index)]", "zone \(zoneID) is not a zone of site \(new.siteID)")
                }
            }
            let count = try await db.raw("SELECT COUNT(*) AS n FROM hunts WHERE site_id = \(bind: new.siteID)").first()?.int("n") ?? 0
            guard count < limits.huntsPerSite else {
                throw RegistryError(.exhausted, field: "siteID", "site \(new.siteID) has its limit of \(limits.huntsPerSite) hunts; delete finished ones")
            }
            guard let row = try await db.raw("""
                INSERT INTO hunts (site_id, name, time_limit, max_speed, stamp_reach, reward, created_at)
                VALUES (\(bind: new.siteID), \(bind: name), \(bind: new.timeLimit), \(bind: maxSpeed), \(bind: reach), \(bind: reward), \(bind: now))
                RETURNING id
                """).first() else {
                throw RegistryError(.invalid, field: "name", "the database returned no id for the new hunt")
            }
            let id = try row.int("id")
            for (index, zoneID) in new.stampZoneIDs.enumerated() {
                try await db.raw("INSERT INTO hunt_stamps (hunt_id, number, zone_id) VALUES (\(bind: id), \(bind: index + 1), \(bind: zoneID))").run()
            }
            return Hunt(id: id, siteID: new.siteID, name: name, stampZoneIDs: new.stampZoneIDs, timeLimit: new.timeLimit,
                        maxSpeed: maxSpeed, stampReach: reach, reward: reward, createdAt: now)
        }
    }

    public func hunts(siteID: Int?) async throws -> [Hunt] {
        try await database.read { db in
            var query = SQLQueryString("SELECT id FROM hunts")
            if let siteID {
                _ = try await Self.site(id: siteID, db: db)
                query += " WHERE site_id = \(bind: siteID)"
            }
            // 50 per site; across every site, the first thousand.
            query += " ORDER BY id LIMIT 1000"
            var hunts: [Hunt] = []
            for row in try await db.raw(query).all() {
                if let hunt = try await Self.hunt(id: try row.int("id"), db: db) { hunts.append(hunt) }
            }
            return hunts
        }
    }

    public func hunt(id: Int) async throws -> Hunt {
        try await database.read { db in
            guard let hunt = try await Self.hunt(id: id, db: db) else { throw Self.noHunt(id) }
            return hunt
        }
    }

    /// The answer to a hunt that does not exist, or that the caller may not know exists.
    static func noHunt(_ id: Int) -> RegistryError {
        RegistryError(.notFound, field: "id", "no hunt \(id)")
    }

    static func hunt(id: Int, db: any SQLDatabase) async throws -> Hunt? {
        guard let row = try await db.raw("""
            SELECT id, site_id, name, time_limit, max_speed, stamp_reach, reward, created_at FROM hunts WHERE id = \(bind: id)
            """).first() else { return nil }
        let stamps = try await db.raw("SELECT zone_id FROM hunt_stamps WHERE hunt_id = \(bind: id) ORDER BY number").all()
        return Hunt(id: try row.int("id"), siteID: try row.int("site_id"), name: try row.string("name"),
                    stampZoneIDs: try stamps.map { try $0.int("zone_id") }, timeLimit: try row.double("time_limit"),
                    maxSpeed: try row.double("max_speed"), stampReach: try row.double("stamp_reach"),
                    reward: try row.string("reward"), createdAt: try row.double("created_at"))
    }

    /// Deletes a hunt with its stamps and runs.
    public func deleteHunt(id: Int) async throws {
        try await database.transaction { db in
            guard try await Self.hunt(id: id, db: db) != nil else { throw Self.noHunt(id) }
            try await db.raw("DELETE FROM hunts WHERE id = \(bind: id)").run()
        }
    }

    static let huntRunColumns = "r.hunt_id, r.device_id, d.name, r.status, r.stamps, r.stamp_count, r.duration, r.reason, r.rewarded_at, r.updated_at, h.reward"

    static func decodeHuntRun(_ row: any SQLRow) throws -> HuntRun {
        let status = HuntRun.Status(rawValue: try row.string("status")) ?? .collecting
        let stamps = try JSONDecoder().decode([HuntRun.Stamp].self, from: Data(try row.string("stamps").utf8))
        return HuntRun(huntID: try row.int("hunt_id"), deviceID: try row.string("device_id"), name: try row.optionalString("name"),
                       status: status, stamps: stamps, stampCount: try row.int("stamp_count"), duration: try row.optionalDouble("duration"),
                       reason: try row.optionalString("reason"), reward: status == .finished ? try row.string("reward") : nil,
                       rewardedAt: try row.optionalDouble("rewarded_at"), updatedAt: try row.double("updated_at"))
    }

    /// A hunt's runs, optionally of one status, most recently changed first, at most `limit`.
    public func huntRuns(huntID: Int, status: HuntRun.Status?, limit: Int) async throws -> [HuntRun] {
        try await database.read { db in
            guard try await Self.hunt(id: huntID, db: db) != nil else { throw Self.noHunt(huntID) }
            var query = SQLQueryString("""
                SELECT \(unsafeRaw: Self.huntRunColumns) FROM hunt_runs r JOIN devices d ON d.id = r.device_id JOIN hunts h ON h.id = r.hunt_id
                WHERE r.hunt_id = \(bind: huntID)
                """)
            if let status { query += " AND r.status = \(bind: status.rawValue)" }
            query += " ORDER BY r.updated_at DESC, r.device_id LIMIT \(bind: limit)"
            return try await db.raw(query).all().map(Self.decodeHuntRun)
        }
    }

    /// A device's runs in every hunt of its site.
    public func huntRuns(deviceID: String) async throws -> [HuntRun] {
        try await database.read { db in
            try await db.raw("""
                SELECT \(unsafeRaw: Self.huntRunColumns) FROM hunt_runs r JOIN devices d ON d.id = r.device_id JOIN hunts h ON h.id = r.hunt_id
                WHERE r.device_id = \(bind: deviceID) ORDER BY r.hunt_id
                """).all().map(Self.decodeHuntRun)
        }
    }

    /// Finishers fastest first (ties: rewarded first), and how many runs are in each status.
    public func huntLeaderboard(huntID: Int, limit: Int) async throws -> HuntLeaderboard {
        try await database.read { db in
            guard try await Self.hunt(id: huntID, db: db) != nil else { throw Self.noHunt(huntID) }
            let rows = try await db.raw("""
                SELECT r.device_id, d.name, r.duration, r.rewarded_at FROM hunt_runs r JOIN devices d ON d.id = r.device_id
                WHERE r.hunt_id = \(bind: huntID) AND r.status = 'finished'
                ORDER BY r.duration, r.rewarded_at, r.device_id LIMIT \(bind: limit)
                """).all()
            let leaders = try rows.enumerated().map { index, row in
                HuntLeader(rank: index + 1, deviceID: try row.string("device_id"), name: try row.optionalString("name"),
                           duration: try row.double("duration"), rewardedAt: try row.double("rewarded_at"))
            }
            var counts = Dictionary(uniqueKeysWithValues: HuntRun.Status.allCases.map { ($0.rawValue, 0) })
            for row in try await db.raw("SELECT status, COUNT(*) AS n FROM hunt_runs WHERE hunt_id = \(bind: huntID) GROUP BY status").all() {
                counts[try row.string("status")] = try row.int("n")
            }
            return HuntLeaderboard(huntID: huntID, leaders: leaders, counts: counts)
        }
    }
}
