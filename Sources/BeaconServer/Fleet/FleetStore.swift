import BeaconFleet
import BeaconKit
import BeaconLocate
import Foundation
import SQLKit

enum FleetMigrations {
    /// Fleet alerts: one row per finding while it is warning or alert (open), kept when cleared;
    /// their changes go into the one event table (`detail` holds the change's JSON).
    static let alerts = Migrations.Migration(version: 5, name: "fleet alerts") { dialect in
        [
            "ALTER TABLE region_events ADD COLUMN detail TEXT",
            """
            CREATE TABLE fleet_alerts (id \(Migrations.serialKey(dialect)), subject_kind TEXT NOT NULL, subject TEXT NOT NULL,
              check_name TEXT NOT NULL, level TEXT NOT NULL, reason TEXT NOT NULL, site_id BIGINT, label TEXT NOT NULL,
              raised_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL, cleared_at DOUBLE PRECISION,
              acknowledged_by TEXT, acknowledged_at DOUBLE PRECISION)
            """,
            // At most one open alert per subject and check.
            "CREATE UNIQUE INDEX fleet_alerts_open ON fleet_alerts (subject_kind, subject, check_name) WHERE cleared_at IS NULL",
        ]
    }
}

/// A fleet finding an operator should look at: open while its level is warning or alert.
public struct FleetAlert: Sendable, Hashable, Codable {
    public var id: Int
    public var check: FleetCheck
    public var level: HealthLevel
    public var reason: String
    public var subject: FleetOccurrence.Subject
    public var siteID: Int?
    public var label: String
    /// Times on the gateways' clock.
    public var raisedAt: Double
    public var updatedAt: Double
    public var clearedAt: Double?
    public var acknowledged: Bool
    /// The name of the token that acknowledged it.
    public var acknowledgedBy: String?
    /// Server time of the acknowledgement.
    public var acknowledgedAt: Double?
}

/// What the event and the alert say about a subject besides the finding.
struct FleetSubjectPlace: Sendable {
    var siteID: Int?
    var label: String
    var gatewayID: String
}

extension Store {
    static let alertColumns = "id, subject_kind, subject, check_name, level, reason, site_id, label, raised_at, updated_at, cleared_at, acknowledged_by, acknowledged_at"

    /// Stores each transition that opens, moves or closes an alert, and its event. `unknown` is
    /// not an alert (a beacon being learnt, or whose gateways are all down): a change between ok
    /// and unknown stores nothing.
    static func storeFleetTransitions(_ transitions: [FleetTransition], place: @Sendable (FleetSubject) -> FleetSubjectPlace, now: Double,
                                      db: any SQLDatabase) async throws -> [StoredEvent] {
        var events: [StoredEvent] = []
        for transition in transitions {
            let from = alertLevel(transition.from), to = alertLevel(transition.to)
            guard from != to else { continue }
            let subject = FleetOccurrence.Subject(transition.subject)
            let known = place(transition.subject)
            let open = try await db.raw("""
                SELECT id FROM fleet_alerts WHERE subject_kind = \(bind: subject.kind) AND subject = \(bind: subject.name)
                AND check_name = \(bind: transition.check.rawValue) AND cleared_at IS NULL
                """).first().map { try $0.int("id") }
            let alertID: Int
            if to == .ok {
                guard let open else { continue }
                try await db.raw("""
                    UPDATE fleet_alerts SET cleared_at = \(bind: transition.time), updated_at = \(bind: transition.time),
                    level = \(bind: transition.to.rawValue), reason = \(bind: transition.reason) WHERE id = \(bind: open)
                    """).run()
                alertID = open
            } else if let open {
                // A higher level needs a new acknowledgement; a lower one keeps it.
                let resetAck = to > from ? SQLQueryString(", acknowledged_by = NULL, acknowledged_at = NULL") : ""
                try await db.raw(SQLQueryString("""
                    UPDATE fleet_alerts SET level = \(bind: transition.to.rawValue), reason = \(bind: transition.reason),
                    updated_at = \(bind: transition.time)
                    """) + resetAck + " WHERE id = \(bind: open)").run()
                alertID = open
            } else {
                guard let row = try await db.raw("""
                    INSERT INTO fleet_alerts (subject_kind, subject, check_name, level, reason, site_id, label, raised_at, updated_at)
                    VALUES (\(bind: subject.kind), \(bind: subject.name), \(bind: transition.check.rawValue), \(bind: transition.to.rawValue),
                            \(bind: transition.reason), \(bind: known.siteID), \(bind: known.label), \(bind: transition.time), \(bind: transition.time))
                    RETURNING id
                    """).first() else { continue }
                alertID = try row.int("id")
            }
            let kind: FleetOccurrence.Kind = to == .ok ? .alertCleared : (to > from ? .alertRaised : .alertLowered)
            let occurrence = FleetOccurrence(kind: kind, time: transition.time, alertID: alertID, check: transition.check,
                                             level: transition.to, previousLevel: transition.from, reason: transition.reason, subject: subject)
            let row = EventRow(gatewayID: known.gatewayID, kind: kind.rawValue,
                               identity: subject.uuid.map { BeaconIdentity(uuid: $0, major: subject.major ?? 0, minor: subject.minor ?? 0) },
                               siteID: known.siteID, label: known.label, time: transition.time, recordedAt: now,
                               subjectKind: subject.kind, subject: subject.name, detail: try IngestService.json(occurrence))
            guard let id = try await row.insert(db: db) else { continue }
            events.append(StoredEvent(id: id, gatewayID: known.gatewayID, siteID: known.siteID, label: known.label,
                                      occurrence: .fleet(occurrence)))
        }
        return events
    }

    /// The level as an alert: warning and alert, or ok for everything below.
    static func alertLevel(_ level: HealthLevel) -> HealthLevel { level >= .warning ? level : .ok }

    static func decodeFleetEvent(_ row: any SQLRow) throws -> StoredEvent {
        let detail = try row.optionalString("detail") ?? ""
        let occurrence: FleetOccurrence
        do { occurrence = try JSONDecoder().decode(FleetOccurrence.self, from: Data(detail.utf8)) } catch {
            throw RegistryError(.invalid, field: "detail", "stored fleet event \(try row.int("id")) does not decode: \(error)")
        }
        return StoredEvent(id: try row.int("id"), gatewayID: try row.string("gateway_id"), siteID: try row.optionalInt("site_id"),
                           label: try row.string("label"), occurrence: .fleet(occurrence))
    }

    static func decodeAlert(_ row: any SQLRow) throws -> FleetAlert {
        let checkText = try row.string("check_name"), levelText = try row.string("level")
        guard let check = FleetCheck(rawValue: checkText), let level = HealthLevel(rawValue: levelText) else {
            throw RegistryError(.invalid, field: "check", "stored alert has check '\(checkText)' and level '\(levelText)'")
        }
        let kind = try row.string("subject_kind"), name = try row.string("subject")
        let subject: FleetSubject = if kind == "beacon", let identity = SiteTracker.identity(name) { .beacon(identity) } else { .gateway(name) }
        let acknowledgedBy = try row.optionalString("acknowledged_by")
        return FleetAlert(id: try row.int("id"), check: check, level: level, reason: try row.string("reason"),
                          subject: FleetOccurrence.Subject(subject), siteID: try row.optionalInt("site_id"), label: try row.string("label"),
                          raisedAt: try row.double("raised_at"), updatedAt: try row.double("updated_at"),
                          clearedAt: try row.optionalDouble("cleared_at"), acknowledged: acknowledgedBy != nil,
                          acknowledgedBy: acknowledgedBy, acknowledgedAt: try row.optionalDouble("acknowledged_at"))
    }

    /// Open alerts (of one site, or all), newest first; at most `limit`.
    public func openFleetAlerts(siteID: Int? = nil, limit: Int = 1000) async throws -> [FleetAlert] {
        try await database.read { db in
            if let siteID { _ = try await Self.site(id: siteID, db: db) }
            var query = SQLQueryString("SELECT \(unsafeRaw: Self.alertColumns) FROM fleet_alerts WHERE cleared_at IS NULL")
            if let siteID { query += " AND site_id = \(bind: siteID)" }
            query += " ORDER BY id DESC LIMIT \(bind: limit)"
            return try await db.raw(query).all().map(Self.decodeAlert)
        }
    }

    /// Records an operator's acknowledgement of an alert (open or cleared) and returns it.
    public func acknowledgeFleetAlert(id: Int, by name: String, at time: Double) async throws -> FleetAlert {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE fleet_alerts SET acknowledged_by = \(bind: name), acknowledged_at = \(bind: time) WHERE id = \(bind: id)
                """).run()
            guard let row = try await db.raw("SELECT \(unsafeRaw: Self.alertColumns) FROM fleet_alerts WHERE id = \(bind: id)").first() else {
                throw RegistryError(.notFound, field: "id", "no fleet alert \(id)")
            }
            return try Self.decodeAlert(row)
        }
    }
}
