import BeaconKit
import SQLKit

/// One row of `region_events`, the table that holds every kind of event (region, room, fleet
/// and security), written by this one statement.
struct EventRow: Sendable {
    var gatewayID: String
    var kind: String
    /// The beacon the event is about; nil for a room event of a phone or a fleet event about a
    /// gateway (stored as an empty UUID and 0, 0).
    var identity: BeaconIdentity?
    var siteID: Int?
    var label: String
    /// When it happened (gateway clock), and when it was stored (server clock).
    var time: Double
    var recordedAt: Double
    var message: String? = nil
    var room: String? = nil
    var subjectKind: String? = nil
    var subject: String? = nil
    var detail: String? = nil

    /// Inserts the row and returns its id (the event's id on every feed).
    func insert(db: any SQLDatabase) async throws -> Int? {
        try await db.raw("""
            INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at,
                                       message, room, subject_kind, subject, detail)
            VALUES (\(bind: gatewayID), \(bind: kind), \(bind: identity?.uuid.uuidString ?? ""), \(bind: Int(identity?.major ?? 0)),
                    \(bind: Int(identity?.minor ?? 0)), \(bind: siteID), \(bind: label), \(bind: time), \(bind: recordedAt),
                    \(bind: message), \(bind: room), \(bind: subjectKind), \(bind: subject), \(bind: detail))
            RETURNING id
            """).first().map { try $0.int("id") }
    }
}
