import Foundation
import SQLKit

enum QueueMigrations {
    /// Check-in rules, visits, check-ins and loyalty counts; queues, the passages of devices
    /// through them, their outcomes (kept a day), hourly wait histograms (kept 90 days) and each
    /// site's queue clock.
    static let checkinsAndQueues = Migrations.Migration(version: 8, name: "check-ins and queues") { dialect in
        let id = Migrations.serialKey(dialect)
        return [
            """
            CREATE TABLE checkin_zones (zone_id BIGINT PRIMARY KEY REFERENCES zones(id) ON DELETE CASCADE,
              site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE, dwell DOUBLE PRECISION NOT NULL,
              absence DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX checkin_zones_site ON checkin_zones (site_id)",
            """
            CREATE TABLE checkin_visits (device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
              zone_id BIGINT NOT NULL REFERENCES zones(id) ON DELETE CASCADE, visit_start DOUBLE PRECISION NOT NULL,
              inside_since DOUBLE PRECISION, dwell_before DOUBLE PRECISION NOT NULL, last_exit DOUBLE PRECISION,
              latest DOUBLE PRECISION NOT NULL, checked_in_at DOUBLE PRECISION, PRIMARY KEY (device_id, zone_id))
            """,
            """
            CREATE TABLE checkins (id \(id), device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
              zone_id BIGINT NOT NULL REFERENCES zones(id) ON DELETE CASCADE, visit_start DOUBLE PRECISION NOT NULL,
              time DOUBLE PRECISION NOT NULL, UNIQUE (device_id, zone_id, visit_start))
            """,
            "CREATE INDEX checkins_device_time ON checkins (device_id, time)",
            """
            CREATE TABLE checkin_loyalty (device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
              zone_id BIGINT NOT NULL REFERENCES zones(id) ON DELETE CASCADE, count BIGINT NOT NULL,
              last DOUBLE PRECISION NOT NULL, PRIMARY KEY (device_id, zone_id))
            """,
            """
            CREATE TABLE queues (id \(id), site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE, name TEXT NOT NULL,
              entry_zone_id BIGINT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
              service_zone_id BIGINT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
              abandon_after DOUBLE PRECISION NOT NULL, created_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX queues_site ON queues (site_id)",
            """
            CREATE TABLE queue_passages (queue_id BIGINT NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
              device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE, entered_at DOUBLE PRECISION NOT NULL,
              last_seen DOUBLE PRECISION NOT NULL, served BIGINT NOT NULL, PRIMARY KEY (queue_id, device_id))
            """,
            "CREATE INDEX queue_passages_seen ON queue_passages (queue_id, last_seen)",
            """
            CREATE TABLE queue_outcomes (id \(id), queue_id BIGINT NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
              device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE, served BIGINT NOT NULL,
              entered_at DOUBLE PRECISION NOT NULL, ended_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX queue_outcomes_time ON queue_outcomes (queue_id, ended_at)",
            """
            CREATE TABLE queue_hours (queue_id BIGINT NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
              hour_start DOUBLE PRECISION NOT NULL, served BIGINT NOT NULL, abandoned BIGINT NOT NULL,
              histogram TEXT NOT NULL, PRIMARY KEY (queue_id, hour_start))
            """,
            """
            CREATE TABLE queue_clocks (site_id BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
              device_time DOUBLE PRECISION NOT NULL, server_time DOUBLE PRECISION NOT NULL)
            """,
        ]
    }
}

extension Store {
    static let queueColumns = "id, site_id, name, entry_zone_id, service_zone_id, abandon_after, created_at"

    static func decodeQueue(_ row: any SQLRow) throws -> Queue {
        Queue(id: try row.int("id"), siteID: try row.int("site_id"), name: try row.string("name"),
              entryZoneID: try row.int("entry_zone_id"), serviceZoneID: try row.int("service_zone_id"),
              abandonAfter: try row.double("abandon_after"), createdAt: try row.double("created_at"))
    }

    /// Creates a queue between two zones of one site.
    public func createQueue(_ new: NewQueue, now: Double) async throws -> Queue {
        let name = new.name.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.count <= QueueLimits.nameLength else {
            throw RegistryError(.invalid, field: "name", "expected 1–\(QueueLimits.nameLength) characters, found \(name.count)")
        }
        try NameText.check(name, field: "name")
        let abandonAfter = new.abandonAfter ?? QueueLimits.defaultAbandonAfter
        guard QueueLimits.abandonAfter.contains(abandonAfter) else {
            throw RegistryError(.invalid, field: "abandonAfter",
                                "expected seconds in \(Int(QueueLimits.abandonAfter.lowerBound))…\(Int(QueueLimits.abandonAfter.upperBound)), found \(abandonAfter)")
        }
        guard new.entryZoneID != new.serviceZoneID else {
            throw RegistryError(.invalid, field: "serviceZoneID", "expected a zone other than the entry zone \(new.entryZoneID)")
        }
        return try await database.transaction { db in
            let entry = try await Self.zoneSite(new.entryZoneID, field: "entryZoneID", db: db)
            let service = try await Self.zoneSite(new.serviceZoneID, field: "serviceZoneID", db: db)
            guard entry == service else {
                throw RegistryError(.invalid, field: "serviceZoneID", "expected a zone of site \(entry) like the entry zone, found one of site \(service)")
            }
            let count = try await db.raw("SELECT COUNT(*) AS n FROM queues WHERE site_id = \(bind: entry)").first()?.int("n") ?? 0
            guard count < QueueLimits.queuesPerSite else {
                throw RegistryError(.exhausted, field: "entryZoneID", "site \(entry) has its limit of \(QueueLimits.queuesPerSite) queues; delete one first")
            }
            guard let row = try await db.raw("""
                INSERT INTO queues (site_id, name, entry_zone_id, service_zone_id, abandon_after, created_at)
                VALUES (\(bind: entry), \(bind: name), \(bind: new.entryZoneID), \(bind: new.serviceZoneID), \(bind: abandonAfter), \(bind: now))
                RETURNING \(unsafeRaw: Self.queueColumns)
                """).first() else { throw RegistryError(.invalid, field: "body", "the queue was not stored") }
            return try Self.decodeQueue(row)
        }
    }

    /// The site of a zone, refused naming `field` when there is no such zone.
    static func zoneSite(_ zoneID: Int, field: String, db: any SQLDatabase) async throws -> Int {
        guard let row = try await db.raw("SELECT site_id FROM zones WHERE id = \(bind: zoneID)").first() else {
            throw RegistryError(.notFound, field: field, "no zone \(zoneID)")
        }
        return try row.int("site_id")
    }

    public func queues(siteID: Int?) async throws -> [Queue] {
        try await database.read { db in
            var query = SQLQueryString("SELECT \(unsafeRaw: Self.queueColumns) FROM queues")
            if let siteID {
                _ = try await Self.site(id: siteID, db: db)
                query += " WHERE site_id = \(bind: siteID)"
            }
            query += " ORDER BY id"
            return try await db.raw(query).all().map(Self.decodeQueue)
        }
    }

    public func queue(id: Int) async throws -> Queue {
        try await database.read { db in try await Self.queue(id: id, db: db) }
    }

    static func queue(id: Int, db: any SQLDatabase) async throws -> Queue {
        guard let row = try await db.raw("SELECT \(unsafeRaw: queueColumns) FROM queues WHERE id = \(bind: id)").first() else {
            throw RegistryError(.notFound, field: "id", "no queue \(id)")
        }
        return try decodeQueue(row)
    }

    public func deleteQueue(id: Int) async throws {
        try await database.transaction { db in
            _ = try await Self.queue(id: id, db: db)
            try await db.raw("DELETE FROM queues WHERE id = \(bind: id)").run()
        }
    }

    // MARK: Reports

    /// A site's queue clock: the latest device time seen, moved on by the server clock since.
    static func queueClock(siteID: Int, now: Double, db: any SQLDatabase) async throws -> Double? {
        guard let row = try await db.raw("SELECT device_time, server_time FROM queue_clocks WHERE site_id = \(bind: siteID)").first() else {
            return nil
        }
        return try row.double("device_time") + max(0, now - row.double("server_time"))
    }

    /// The queue's report at the server time `now`. Passages whose devices have been away for
    /// the queue's `abandonAfter` are closed first, so an abandonment counts as soon as the
    /// queue's clock says so, whether or not the device posts again.
    public func queueReport(id: Int, hours: Int, now: Double) async throws -> QueueReport {
        try await database.transaction { db in
            let queue = try await Self.queue(id: id, db: db)
            let clock = try await Self.queueClock(siteID: queue.siteID, now: now, db: db) ?? 0
            try await QueueApplication.closePassages(of: queue, clock: clock, db: db)

            let passages = try await db.raw("SELECT entered_at FROM queue_passages WHERE queue_id = \(bind: id) AND served = 0").all()
            let entered = try passages.map { try $0.double("entered_at") }
            let live = QueueReport.Live(waiting: entered.count, longestWait: entered.min().map { max(0, clock - $0) })

            let windowStart = clock - 900
            let outcomes = try await db.raw("""
                SELECT served, entered_at, ended_at FROM queue_outcomes WHERE queue_id = \(bind: id) AND ended_at > \(bind: windowStart)
                ORDER BY ended_at DESC LIMIT \(unsafeRaw: String(QueueLimits.windowRows))
                """).all()
            var waits: [Double] = []
            var abandoned = 0
            for row in outcomes {
                if try row.int("served") != 0 { waits.append(try row.double("ended_at") - row.double("entered_at")) } else { abandoned += 1 }
            }
            waits.sort()
            let recent = WaitSummary(from: windowStart, to: clock, served: waits.count, abandoned: abandoned,
                                     p50: WaitHistogram.exactQuantile(0.5, of: waits), p90: WaitHistogram.exactQuantile(0.9, of: waits))

            let firstHour = (clock / 3600).rounded(.down) * 3600 - Double(hours - 1) * 3600
            let rows = try await db.raw("""
                SELECT hour_start, served, abandoned, histogram FROM queue_hours
                WHERE queue_id = \(bind: id) AND hour_start >= \(bind: firstHour) ORDER BY hour_start
                """).all()
            var all = WaitHistogram()
            var hourly: [WaitSummary] = []
            var totalAbandoned = 0
            for row in rows {
                let histogram = try JSONDecoder().decode(WaitHistogram.self, from: Data(try row.string("histogram").utf8))
                let start = try row.double("hour_start")
                let hourAbandoned = try row.int("abandoned")
                all.merge(histogram)
                totalAbandoned += hourAbandoned
                hourly.append(WaitSummary(from: start, to: start + 3600, served: try row.int("served"), abandoned: hourAbandoned,
                                          p50: histogram.quantile(0.5), p90: histogram.quantile(0.9)))
            }
            let total = WaitSummary(from: firstHour, to: clock, served: all.total, abandoned: totalAbandoned,
                                    p50: all.quantile(0.5), p90: all.quantile(0.9))
            return QueueReport(queue: queue, clock: clock, live: live, last15Minutes: recent, hours: hourly, total: total)
        }
    }

    /// Every queue's report for `/metrics`, at most `limit` queues.
    public func queueReports(limit: Int = 1_000, now: Double) async throws -> [QueueReport] {
        let ids = try await database.read { db in
            try await db.raw("SELECT id FROM queues ORDER BY id LIMIT \(unsafeRaw: String(limit))").all().map { try $0.int("id") }
        }
        var reports: [QueueReport] = []
        for id in ids {
            if let report = try? await queueReport(id: id, hours: 1, now: now) { reports.append(report) }
        }
        return reports
    }
}
