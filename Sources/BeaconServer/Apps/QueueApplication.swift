import BeaconKit
import Foundation
import SQLKit

/// Feeds each device's queue zones to ``QueueRule`` and stores what it returns: the passage of
/// the device through each queue of its site, and each served or abandoned passage as an
/// outcome and in its hour's histogram. Runs in the batch's transaction, so a retried batch is
/// never counted twice.
struct QueueApplication: DeviceApplication {
    func observe(_ batch: DeviceBatch, db: any SQLDatabase) async throws -> [StoredEvent] {
        // Queues are read as state (GET /v1/queues/{id}); they publish no events.
        guard let latest = batch.sightings.map(\.time).max() else { return [] }
        let rows = try await db.raw("""
            SELECT q.id, q.site_id, q.name, q.entry_zone_id, q.service_zone_id, q.abandon_after, q.created_at,
              e.minor AS entry_minor, s.minor AS service_minor
            FROM queues q JOIN zones e ON e.id = q.entry_zone_id JOIN zones s ON s.id = q.service_zone_id
            WHERE q.site_id = \(bind: batch.device.siteID)
            """).all()
        guard !rows.isEmpty else { return [] }
        try await db.raw("""
            INSERT INTO queue_clocks (site_id, device_time, server_time) VALUES (\(bind: batch.device.siteID), \(bind: latest), \(bind: batch.now))
            ON CONFLICT (site_id) DO UPDATE SET device_time = excluded.device_time, server_time = excluded.server_time
            WHERE queue_clocks.device_time < excluded.device_time
            """).run()
        let site = try await Store.site(id: batch.device.siteID, db: db)
        let clock = try await Store.queueClock(siteID: site.id, now: batch.now, db: db) ?? latest
        for row in rows {
            let queue = try Store.decodeQueue(row)
            let entry = BeaconIdentity(uuid: site.uuid, major: site.major, minor: try row.uint16("entry_minor"))
            let service = BeaconIdentity(uuid: site.uuid, major: site.major, minor: try row.uint16("service_minor"))
            let observations = Self.observations(batch, entry: entry, service: service)
            if !observations.isEmpty {
                try await step(queue, device: batch.device.id, observations: observations, db: db)
            }
            try await Self.closePassages(of: queue, clock: clock, db: db)
        }
        return []
    }

    static func observations(_ batch: DeviceBatch, entry: BeaconIdentity, service: BeaconIdentity) -> [QueueRule.Observation] {
        var observations: [QueueRule.Observation] = []
        for event in batch.events {
            guard case .region(.didEnter(let region, let time)) = event.occurrence, region.uuid == entry.uuid,
                  region.major == entry.major, let minor = region.minor else { continue }
            if minor == entry.minor { observations.append(.entryEnter(time)) }
            if minor == service.minor { observations.append(.serviceEnter(time)) }
        }
        // The latest sighting of each zone in the batch is all the rule needs between enters.
        var lastHeard: [BeaconIdentity: Double] = [:]
        for sighting in batch.sightings {
            guard let identity = sighting.frame.iBeacon?.identity, identity == entry || identity == service else { continue }
            lastHeard[identity] = max(lastHeard[identity] ?? -.infinity, sighting.time)
        }
        observations += lastHeard.values.map { .seen($0) }
        return observations
    }

    private func step(_ queue: Queue, device: String, observations: [QueueRule.Observation], db: any SQLDatabase) async throws {
        let rule = QueueRule(abandonAfter: queue.abandonAfter)
        let lock = db.dialect.name == "postgresql" ? " FOR UPDATE" : ""
        let stored = try await db.raw(SQLQueryString("""
            SELECT entered_at, last_seen, served FROM queue_passages WHERE queue_id = \(bind: queue.id) AND device_id = \(bind: device)
            """) + SQLQueryString(lock)).first().map { row in
            QueueRule.Passage(enteredAt: try row.double("entered_at"), lastSeen: try row.double("last_seen"), served: try row.int("served") != 0)
        }
        let (passage, outcomes) = rule.step(stored, observations: observations)
        for outcome in outcomes { try await Self.record(outcome, queue: queue, device: device, db: db) }
        if let passage {
            try await db.raw("""
                INSERT INTO queue_passages (queue_id, device_id, entered_at, last_seen, served)
                VALUES (\(bind: queue.id), \(bind: device), \(bind: passage.enteredAt), \(bind: passage.lastSeen), \(bind: passage.served ? 1 : 0))
                ON CONFLICT (queue_id, device_id) DO UPDATE SET entered_at = excluded.entered_at, last_seen = excluded.last_seen, served = excluded.served
                """).run()
        } else if stored != nil {
            try await db.raw("DELETE FROM queue_passages WHERE queue_id = \(bind: queue.id) AND device_id = \(bind: device)").run()
        }
    }

    /// Ends the passages whose devices have been away for `abandonAfter` on the queue's clock:
    /// served ones are forgotten, the others count as abandoned. Reads only those rows (indexed
    /// by queue and last sighting).
    static func closePassages(of queue: Queue, clock: Double, db: any SQLDatabase) async throws {
        let rule = QueueRule(abandonAfter: queue.abandonAfter)
        let cutoff = clock - queue.abandonAfter
        let rows = try await db.raw("""
            SELECT device_id, entered_at, last_seen, served FROM queue_passages WHERE queue_id = \(bind: queue.id) AND last_seen <= \(bind: cutoff)
            """).all()
        for row in rows {
            let passage = QueueRule.Passage(enteredAt: try row.double("entered_at"), lastSeen: try row.double("last_seen"), served: try row.int("served") != 0)
            let device = try row.string("device_id")
            guard rule.isOver(passage, at: clock) else { continue }
            // Deleted first: on PostgreSQL another instance closing the same passage deletes nothing and records nothing.
            let deleted = try await db.raw("""
                DELETE FROM queue_passages WHERE queue_id = \(bind: queue.id) AND device_id = \(bind: device) AND last_seen = \(bind: passage.lastSeen)
                RETURNING device_id
                """).all()
            guard !deleted.isEmpty, let outcome = rule.expire(passage) else { continue }
            try await record(outcome, queue: queue, device: device, db: db)
        }
    }

    static func record(_ outcome: QueueRule.Outcome, queue: Queue, device: String, db: any SQLDatabase) async throws {
        let (served, enteredAt, endedAt): (Bool, Double, Double) = switch outcome {
        case .served(let entered, let at): (true, entered, at)
        case .abandoned(let entered, let at): (false, entered, at)
        }
        try await db.raw("""
            INSERT INTO queue_outcomes (queue_id, device_id, served, entered_at, ended_at)
            VALUES (\(bind: queue.id), \(bind: device), \(bind: served ? 1 : 0), \(bind: enteredAt), \(bind: endedAt))
            """).run()
        try await db.raw("DELETE FROM queue_outcomes WHERE queue_id = \(bind: queue.id) AND ended_at < \(bind: endedAt - QueueLimits.waitRetention)").run()

        let hour = (endedAt / 3600).rounded(.down) * 3600
        try await db.raw("""
            INSERT INTO queue_hours (queue_id, hour_start, served, abandoned, histogram)
            VALUES (\(bind: queue.id), \(bind: hour), 0, 0, \(bind: try ProximaJSON.text(WaitHistogram())))
            ON CONFLICT (queue_id, hour_start) DO NOTHING
            """).run()
        let lock = db.dialect.name == "postgresql" ? " FOR UPDATE" : ""
        guard let row = try await db.raw(SQLQueryString("""
            SELECT served, abandoned, histogram FROM queue_hours WHERE queue_id = \(bind: queue.id) AND hour_start = \(bind: hour)
            """) + SQLQueryString(lock)).first() else { return }
        var histogram = try JSONDecoder().decode(WaitHistogram.self, from: Data(try row.string("histogram").utf8))
        var servedCount = try row.int("served"), abandonedCount = try row.int("abandoned")
        if served {
            histogram.add(endedAt - enteredAt)
            servedCount += 1
        } else {
            abandonedCount += 1
        }
        try await db.raw("""
            UPDATE queue_hours SET served = \(bind: servedCount), abandoned = \(bind: abandonedCount), histogram = \(bind: try ProximaJSON.text(histogram))
            WHERE queue_id = \(bind: queue.id) AND hour_start = \(bind: hour)
            """).run()
        try await db.raw("DELETE FROM queue_hours WHERE queue_id = \(bind: queue.id) AND hour_start < \(bind: hour - QueueLimits.hourRetention)").run()
    }
}
