import BeaconKit
import Foundation
import SQLKit

enum HelpRequestMigrations {
    /// Help requests, their change log (what the streams replay), each phone's last nearest
    /// beacon, the phones that may help, and running totals for the metrics.
    static let helpRequests = Migrations.Migration(version: 7, name: "help requests") { dialect in
        let id = Migrations.serialKey(dialect)
        return [
            """
            CREATE TABLE help_requests (id \(id), site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
              device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE, name TEXT,
              uuid TEXT NOT NULL, major BIGINT NOT NULL, minor BIGINT NOT NULL, state TEXT NOT NULL, nearest TEXT,
              created_at DOUBLE PRECISION NOT NULL, acknowledged_at DOUBLE PRECISION,
              helper_id TEXT, helper_name TEXT, helper_device_id TEXT,
              reached_at DOUBLE PRECISION, reached_by TEXT, done_at DOUBLE PRECISION, cancelled_at DOUBLE PRECISION,
              helper_distance TEXT, distance_changed_at DOUBLE PRECISION, version BIGINT NOT NULL)
            """,
            "CREATE INDEX help_requests_site ON help_requests (site_id, state, id)",
            "CREATE INDEX help_requests_site_id ON help_requests (site_id, id)",
            "CREATE INDEX help_requests_device ON help_requests (device_id, state)",
            "CREATE INDEX help_requests_helper ON help_requests (helper_device_id, state)",
            // Two live requests of a site never advertise the same minor.
            "CREATE UNIQUE INDEX help_requests_live_minor ON help_requests (site_id, minor) WHERE state IN ('open', 'acknowledged', 'reached')",
            """
            CREATE TABLE help_request_changes (id \(id), request_id BIGINT NOT NULL REFERENCES help_requests(id) ON DELETE CASCADE,
              site_id BIGINT NOT NULL, kind TEXT NOT NULL, time DOUBLE PRECISION NOT NULL, body TEXT NOT NULL)
            """,
            "CREATE INDEX help_request_changes_request ON help_request_changes (request_id, id)",
            "CREATE INDEX help_request_changes_site ON help_request_changes (site_id, id)",
            """
            CREATE TABLE help_device_nearest (device_id TEXT PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
              uuid TEXT NOT NULL, major BIGINT NOT NULL, minor BIGINT NOT NULL, label TEXT, rssi DOUBLE PRECISION NOT NULL,
              time DOUBLE PRECISION NOT NULL)
            """,
            """
            CREATE TABLE help_helpers (device_id TEXT PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
              site_id BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX help_helpers_site ON help_helpers (site_id)",
            """
            CREATE TABLE help_metrics (site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE, helper_id TEXT NOT NULL,
              helper_name TEXT, helper_device_id TEXT, filed BIGINT NOT NULL, acknowledged BIGINT NOT NULL,
              acknowledge_seconds DOUBLE PRECISION NOT NULL, reached BIGINT NOT NULL, reach_seconds DOUBLE PRECISION NOT NULL,
              done BIGINT NOT NULL, cancelled BIGINT NOT NULL, PRIMARY KEY (site_id, helper_id))
            """,
            // The gateways ranging a visitor's beacon, found without reading every gateway's state.
            "CREATE INDEX IF NOT EXISTS ranging_state_identity ON ranging_state (uuid, major, minor)",
        ]
    }
}

extension Store {
    static let helpColumns = """
        id, site_id, device_id, name, uuid, major, minor, state, nearest, created_at, acknowledged_at, helper_id, helper_name,
        helper_device_id, reached_at, reached_by, done_at, cancelled_at, helper_distance, version
        """

    static func decodeHelpRequest(_ row: any SQLRow) throws -> HelpRequest {
        let decoder = JSONDecoder()
        let nearest = try row.optionalString("nearest").map { try decoder.decode(HelpBeacon.self, from: Data($0.utf8)) }
        let state = try row.string("state")
        guard let parsedState = HelpRequestState(rawValue: state) else {
            throw RegistryError(.invalid, field: "state", "stored help request state '\(state)' is unknown")
        }
        let helper = try row.optionalString("helper_id").map { id in
            HelpHelper(id: id, name: try row.optionalString("helper_name") ?? id, deviceID: try row.optionalString("helper_device_id"))
        }
        return HelpRequest(
            id: try row.int("id"), siteID: try row.int("site_id"), deviceID: try row.string("device_id"), name: try row.optionalString("name"),
            beacon: HelpBeacon(uuid: try row.uuid("uuid"), major: try row.uint16("major"), minor: try row.uint16("minor")),
            state: parsedState, nearest: nearest, createdAt: try row.double("created_at"),
            acknowledgedAt: try row.optionalDouble("acknowledged_at"), helper: helper,
            reachedAt: try row.optionalDouble("reached_at"), reachedBy: try row.optionalString("reached_by"),
            doneAt: try row.optionalDouble("done_at"), cancelledAt: try row.optionalDouble("cancelled_at"),
            helperDistance: try row.optionalString("helper_distance").map { try decoder.decode(HelpDistance.self, from: Data($0.utf8)) },
            gatewayDistance: nil, room: parsedState.isLive ? nearest?.label : nil, version: try row.int("version"))
    }

    static func helpRequest(id: Int, db: any SQLDatabase, lock: Bool = false) async throws -> HelpRequest {
        guard let row = try await db.raw("SELECT \(unsafeRaw: helpColumns) FROM help_requests WHERE id = \(bind: id)" + (lock ? " FOR UPDATE" : "")).first() else {
            throw RegistryError(.notFound, field: "id", "no help request \(id)")
        }
        var request = try decodeHelpRequest(row)
        if request.state.isLive { request.gatewayDistance = try await nearestGateway(ranging: request.beacon.identity, db: db) }
        return request
    }

    /// The gateway (not a phone) ranging the beacon nearest, among the readings of the last
    /// seconds of the newest one (readings carry the gateways' clocks, so they are compared with
    /// each other rather than with the server's).
    static func nearestGateway(ranging identity: BeaconIdentity, db: any SQLDatabase, freshness: Double = HelpRequestLimits().gatewayReadingAge) async throws -> HelpDistance? {
        let rows = try await db.raw("""
            SELECT r.gateway_id, r.distance, r.proximity, r.time, g.name FROM ranging_state r JOIN gateways g ON g.id = r.gateway_id
            WHERE r.uuid = \(bind: identity.uuid.uuidString) AND r.major = \(bind: Int(identity.major)) AND r.minor = \(bind: Int(identity.minor))
              AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = r.gateway_id)
            ORDER BY r.time DESC LIMIT 50
            """).all()
        guard let newest = try rows.first?.double("time") else { return nil }
        var best: HelpDistance?
        for row in rows {
            let time = try row.double("time")
            guard time >= newest - freshness else { break }
            let reading = HelpDistance(distance: try row.optionalDouble("distance"), proximity: try row.string("proximity"),
                                       receiverID: try row.string("gateway_id"), receiverName: try row.optionalString("name"), time: time)
            if best == nil || (reading.distance ?? .infinity) < (best?.distance ?? .infinity) { best = reading }
        }
        return best
    }

    /// Stores a change of a request: bumps its version and appends it to the change log the
    /// streams read.
    static func recordHelpChange(_ kind: String, requestID: Int, now: Double, db: any SQLDatabase) async throws -> HelpRequest {
        try await db.raw("UPDATE help_requests SET version = version + 1 WHERE id = \(bind: requestID)").run()
        let request = try await helpRequest(id: requestID, db: db)
        try await db.raw("""
            INSERT INTO help_request_changes (request_id, site_id, kind, time, body)
            VALUES (\(bind: requestID), \(bind: request.siteID), \(bind: kind), \(bind: now), \(bind: try ProximaJSON.text(request)))
            """).run()
        return request
    }

    // MARK: Filing

    /// Files a visitor's request (the device's own token). A live request the same phone filed
    /// before is cancelled: the phone asking again replaces it.
    public func fileHelpRequest(deviceID: String, _ new: NewHelpRequest, limits: HelpRequestLimits = HelpRequestLimits(), now: Double) async throws -> HelpRequest {
        var name = new.name?.trimmingCharacters(in: .whitespaces)
        if let given = name {
            guard given.count <= limits.nameLength else {
                throw RegistryError(.invalid, field: "name", "expected at most \(limits.nameLength) characters, found \(given.count)")
            }
            try NameText.check(given, field: "name")
            if given.isEmpty { name = nil }
        }
        let storedName = name
        return try await database.transaction { db in
            guard let device = try await Self.device(id: deviceID, db: db) else {
                throw RegistryError(.notFound, field: "Authorization", "the device this token was issued to has been deleted")
            }
            let site = try await Self.site(id: device.siteID, db: db)
            let previous = try await db.raw("""
                SELECT id FROM help_requests WHERE device_id = \(bind: deviceID) AND state IN ('open', 'acknowledged', 'reached')
                """).all().map { try $0.int("id") }
            for id in previous {
                _ = try await Self.finishHelpRequest(id: id, as: .cancelled, now: now, db: db)
            }
            let live = try await db.raw("""
                SELECT COUNT(*) AS n FROM help_requests WHERE site_id = \(bind: site.id) AND state IN ('open', 'acknowledged', 'reached')
                """).first()?.int("n") ?? 0
            guard live < limits.liveRequestsPerSite else {
                throw RegistryError(.exhausted, field: "siteID", "site \(site.id) has its limit of \(limits.liveRequestsPerSite) live help requests")
            }
            let taken = try await db.raw("""
                SELECT id FROM help_requests WHERE site_id = \(bind: site.id) AND minor = \(bind: Int(new.minor))
                  AND state IN ('open', 'acknowledged', 'reached')
                """).first()
            guard taken == nil else {
                throw RegistryError(.conflict, field: "minor", "minor \(new.minor) is advertised by another live help request of site \(site.id); choose another at random")
            }
            let nearest = try await Self.lastNearest(deviceID: deviceID, db: db)
            guard let row = try await db.raw("""
                INSERT INTO help_requests (site_id, device_id, name, uuid, major, minor, state, nearest, created_at, version)
                VALUES (\(bind: site.id), \(bind: deviceID), \(bind: storedName), \(bind: site.uuid.uuidString),
                        \(bind: Int(HelpRequestLimits.major)), \(bind: Int(new.minor)), 'open',
                        \(bind: try nearest.map { try ProximaJSON.text($0) }), \(bind: now), 0)
                RETURNING id
                """).first() else {
                throw RegistryError(.invalid, field: "body", "the database returned no id for the new help request")
            }
            let id = try row.int("id")
            try await Self.countHelp(siteID: site.id, helper: nil, filed: 1, db: db)
            return try await Self.recordHelpChange("filed", requestID: id, now: now, db: db)
        }
    }

    static func lastNearest(deviceID: String, db: any SQLDatabase) async throws -> HelpBeacon? {
        guard let row = try await db.raw("SELECT uuid, major, minor, label FROM help_device_nearest WHERE device_id = \(bind: deviceID)").first() else {
            return nil
        }
        return HelpBeacon(uuid: try row.uuid("uuid"), major: try row.uint16("major"), minor: try row.uint16("minor"), label: try row.optionalString("label"))
    }

    // MARK: Reading

    public func helpRequest(id: Int) async throws -> HelpRequest {
        try await database.read { db in try await Self.helpRequest(id: id, db: db) }
    }

    /// Newest first, at most `limit`; live requests carry the nearest gateway's ranging.
    public func helpRequests(siteID: Int?, state: HelpRequestState?, limit: Int) async throws -> [HelpRequest] {
        try await database.read { db in
            var query = SQLQueryString("SELECT \(unsafeRaw: Self.helpColumns) FROM help_requests WHERE 1 = 1")
            if let siteID { query += " AND site_id = \(bind: siteID)" }
            if let state { query += " AND state = \(bind: state.rawValue)" }
            query += " ORDER BY id DESC LIMIT \(bind: limit)"
            var requests = try await db.raw(query).all().map(Self.decodeHelpRequest)
            for index in requests.indices where requests[index].state.isLive {
                requests[index].gatewayDistance = try await Self.nearestGateway(ranging: requests[index].beacon.identity, db: db)
            }
            return requests
        }
    }

    /// The newest change's id (0 before any): where a stream of new changes starts.
    public func latestHelpChange() async throws -> Int {
        try await database.read { db in
            try await db.raw("SELECT MAX(id) AS latest FROM help_request_changes").first()?.optionalInt("latest") ?? 0
        }
    }

    /// Changes after `after` (a change id), of one request or one site, oldest first.
    public func helpChanges(after: Int, requestID: Int?, siteID: Int?, limit: Int = 100) async throws -> [HelpRequestChange] {
        try await database.read { db in
            var query = SQLQueryString("SELECT id, kind, time, body FROM help_request_changes WHERE id > \(bind: after)")
            if let requestID { query += " AND request_id = \(bind: requestID)" }
            if let siteID { query += " AND site_id = \(bind: siteID)" }
            query += " ORDER BY id LIMIT \(bind: limit)"
            let decoder = JSONDecoder()
            return try await db.raw(query).all().map { row in
                HelpRequestChange(id: try row.int("id"), kind: try row.string("kind"), time: try row.double("time"),
                                  request: try decoder.decode(HelpRequest.self, from: Data(try row.string("body").utf8)))
            }
        }
    }

    // MARK: Moving a request on

    /// Acknowledges an open request: a helper is on the way.
    public func acknowledgeHelpRequest(id: Int, helper: HelpHelper, now: Double) async throws -> HelpRequest {
        try await database.transaction { db in
            let request = try await Self.lockedHelpRequest(id: id, db: db)
            guard request.state == .open else {
                throw RegistryError(.conflict, field: "state", "help request \(id) is \(request.state.rawValue), not open; only an open request can be acknowledged")
            }
            try await db.raw("""
                UPDATE help_requests SET state = 'acknowledged', acknowledged_at = \(bind: now), helper_id = \(bind: helper.id),
                  helper_name = \(bind: helper.name), helper_device_id = \(bind: helper.deviceID) WHERE id = \(bind: id)
                """).run()
            let seconds = now - request.createdAt
            try await Self.countHelp(siteID: request.siteID, helper: nil, acknowledged: 1, acknowledgeSeconds: seconds, db: db)
            try await Self.countHelp(siteID: request.siteID, helper: helper, acknowledged: 1, acknowledgeSeconds: seconds, db: db)
            return try await Self.recordHelpChange("acknowledged", requestID: id, now: now, db: db)
        }
    }

    /// Marks an acknowledged request reached: by the helper's own word, or by its phone's ranging.
    public func reachHelpRequest(id: Int, by: String, now: Double) async throws -> HelpRequest {
        try await database.transaction { db in
            try await Self.reach(id: id, by: by, now: now, db: db)
        }
    }

    static func reach(id: Int, by: String, now: Double, db: any SQLDatabase) async throws -> HelpRequest {
        let request = try await lockedHelpRequest(id: id, db: db)
        guard request.state == .acknowledged, let acknowledgedAt = request.acknowledgedAt else {
            throw RegistryError(.conflict, field: "state", "help request \(id) is \(request.state.rawValue), not acknowledged; only an acknowledged request can be reached")
        }
        try await db.raw("UPDATE help_requests SET state = 'reached', reached_at = \(bind: now), reached_by = \(bind: by) WHERE id = \(bind: id)").run()
        let seconds = now - acknowledgedAt
        try await countHelp(siteID: request.siteID, helper: nil, reached: 1, reachSeconds: seconds, db: db)
        try await countHelp(siteID: request.siteID, helper: request.helper, reached: 1, reachSeconds: seconds, db: db)
        return try await recordHelpChange("reached", requestID: id, now: now, db: db)
    }

    /// Done (after acknowledgement; reaching first is counted when it was not recorded) or
    /// cancelled (while live).
    public func finishHelpRequest(id: Int, as state: HelpRequestState, now: Double) async throws -> HelpRequest {
        try await database.transaction { db in
            try await Self.finishHelpRequest(id: id, as: state, now: now, db: db)
        }
    }

    static func finishHelpRequest(id: Int, as state: HelpRequestState, now: Double, db: any SQLDatabase) async throws -> HelpRequest {
        var request = try await lockedHelpRequest(id: id, db: db)
        switch state {
        case .done:
            guard request.state == .acknowledged || request.state == .reached else {
                throw RegistryError(.conflict, field: "state", "help request \(id) is \(request.state.rawValue); only an acknowledged or reached request can be done")
            }
            if request.state == .acknowledged { request = try await reach(id: id, by: "helper", now: now, db: db) }
            try await db.raw("UPDATE help_requests SET state = 'done', done_at = \(bind: now) WHERE id = \(bind: id)").run()
        case .cancelled:
            guard request.state.isLive else {
                throw RegistryError(.conflict, field: "state", "help request \(id) is \(request.state.rawValue) already")
            }
            try await db.raw("UPDATE help_requests SET state = 'cancelled', cancelled_at = \(bind: now) WHERE id = \(bind: id)").run()
        default:
            throw RegistryError(.invalid, field: "state", "a request is finished as done or cancelled, not \(state.rawValue)")
        }
        let done = state == .done ? 1 : 0, cancelled = state == .cancelled ? 1 : 0
        try await countHelp(siteID: request.siteID, helper: nil, done: done, cancelled: cancelled, db: db)
        if request.helper != nil {
            try await countHelp(siteID: request.siteID, helper: request.helper, done: done, cancelled: cancelled, db: db)
        }
        // A finished request's stream needs its states, not every distance it went through.
        try await db.raw("DELETE FROM help_request_changes WHERE request_id = \(bind: id) AND kind = 'distance'").run()
        return try await recordHelpChange(state.rawValue, requestID: id, now: now, db: db)
    }

    private static func lockedHelpRequest(id: Int, db: any SQLDatabase) async throws -> HelpRequest {
        try await helpRequest(id: id, db: db, lock: (db.dialect.name == "postgresql"))
    }

    // MARK: Helpers' phones

    /// Lets a registered phone help on its site: list the site's requests, acknowledge them and
    /// range the visitors.
    public func addHelper(deviceID: String, now: Double) async throws -> Device {
        try await database.transaction { db in
            guard let device = try await Self.device(id: deviceID, db: db) else {
                throw RegistryError(.notFound, field: "id", "no device \(deviceID.prefix(64))")
            }
            try await db.raw("""
                INSERT INTO help_helpers (device_id, site_id, created_at) VALUES (\(bind: deviceID), \(bind: device.siteID), \(bind: now))
                ON CONFLICT (device_id) DO NOTHING
                """).run()
            return device
        }
    }

    public func removeHelper(deviceID: String) async throws {
        try await database.transaction { db in
            guard try await db.raw("SELECT device_id FROM help_helpers WHERE device_id = \(bind: deviceID)").first() != nil else {
                throw RegistryError(.notFound, field: "id", "device \(deviceID.prefix(64)) is not a helper")
            }
            try await db.raw("DELETE FROM help_helpers WHERE device_id = \(bind: deviceID)").run()
        }
    }

    /// The helper phones of a site (or of all sites).
    public func helpers(siteID: Int?) async throws -> [Device] {
        try await database.read { db in
            var query = SQLQueryString("SELECT d.id, d.site_id, d.name, d.anonymous, d.consent_events, d.consent_positions, d.created_at FROM help_helpers h JOIN devices d ON d.id = h.device_id")
            if let siteID { query += " WHERE h.site_id = \(bind: siteID)" }
            query += " ORDER BY h.created_at, d.id"
            return try await db.raw(query).all().map(Self.decodeDevice)
        }
    }

    /// The site a helper phone helps on, nil for a phone that is not a helper.
    func helperSite(deviceID: String) async throws -> Int? {
        try await database.read { db in
            try await db.raw("SELECT site_id FROM help_helpers WHERE device_id = \(bind: deviceID)").first()?.int("site_id")
        }
    }

    // MARK: Metrics

    static func countHelp(siteID: Int, helper: HelpHelper?, filed: Int = 0, acknowledged: Int = 0, acknowledgeSeconds: Double = 0,
                          reached: Int = 0, reachSeconds: Double = 0, done: Int = 0, cancelled: Int = 0, db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO help_metrics (site_id, helper_id, helper_name, helper_device_id, filed, acknowledged, acknowledge_seconds,
              reached, reach_seconds, done, cancelled)
            VALUES (\(bind: siteID), \(bind: helper?.id ?? ""), \(bind: helper?.name), \(bind: helper?.deviceID), \(bind: filed),
              \(bind: acknowledged), \(bind: acknowledgeSeconds), \(bind: reached), \(bind: reachSeconds), \(bind: done), \(bind: cancelled))
            ON CONFLICT (site_id, helper_id) DO UPDATE SET filed = help_metrics.filed + excluded.filed,
              acknowledged = help_metrics.acknowledged + excluded.acknowledged,
              acknowledge_seconds = help_metrics.acknowledge_seconds + excluded.acknowledge_seconds,
              reached = help_metrics.reached + excluded.reached, reach_seconds = help_metrics.reach_seconds + excluded.reach_seconds,
              done = help_metrics.done + excluded.done, cancelled = help_metrics.cancelled + excluded.cancelled,
              helper_name = excluded.helper_name
            """).run()
    }

    /// Totals per site and per helper: one row each, kept as requests move, so reading them
    /// costs the same whatever the history.
    public func helpMetrics(siteID: Int?) async throws -> HelpRequestMetrics {
        try await database.read { db in
            var query = SQLQueryString("SELECT * FROM help_metrics")
            if let siteID { query += " WHERE site_id = \(bind: siteID)" }
            query += " ORDER BY site_id, helper_id LIMIT 10000"
            var sites: [HelpRequestMetrics.Figures] = []
            var helpers: [HelpRequestMetrics.Figures] = []
            for row in try await db.raw(query).all() {
                let helperID = try row.string("helper_id")
                let acknowledged = try row.int("acknowledged"), reached = try row.int("reached")
                let done = try row.int("done"), cancelled = try row.int("cancelled")
                let figures = HelpRequestMetrics.Figures(
                    siteID: try row.int("site_id"),
                    helper: helperID.isEmpty ? nil : HelpHelper(id: helperID, name: try row.optionalString("helper_name") ?? helperID,
                                                                deviceID: try row.optionalString("helper_device_id")),
                    filed: try row.int("filed"), acknowledged: acknowledged, reached: reached, done: done, cancelled: cancelled,
                    meanSecondsToAcknowledge: acknowledged > 0 ? try row.double("acknowledge_seconds") / Double(acknowledged) : nil,
                    meanSecondsToReach: reached > 0 ? try row.double("reach_seconds") / Double(reached) : nil,
                    successRate: done + cancelled > 0 ? Double(done) / Double(done + cancelled) : nil)
                if helperID.isEmpty { sites.append(figures) } else { helpers.append(figures) }
            }
            return HelpRequestMetrics(sites: sites, helpers: helpers)
        }
    }
}
