import BeaconGateway
import BeaconKit
import Foundation
import SQLKit

/// What one batch did.
public struct IngestResult: Sendable, Hashable, Codable {
    public var accepted: Int
    public var duplicate: Bool
    public var events: [StoredEvent]
}

extension Store {
    /// Applies a batch to its gateway's checkpointed monitor in one transaction: loads the
    /// checkpoint (row-locked on PostgreSQL, so two instances take a gateway's batches one at a
    /// time), stores new events and the latest ranging state, and saves the checkpoint. A batch
    /// whose sequence is not above the checkpoint's is a retry and changes nothing.
    public func ingest(gatewayID: String, batch: SightingBatch, instance: String, exitAfter: Double? = nil) async throws -> IngestResult {
        let lock = database.rowLockSuffix
        return try await database.transaction { db in
            let select = SQLQueryString("SELECT last_sequence, state FROM gateway_checkpoints WHERE gateway_id = \(bind: gatewayID)") + SQLQueryString(lock)
            var row = try await db.raw(select).first()
            if row == nil {
                let initial = try String(decoding: JSONEncoder().encode(GatewayMonitor(exitAfter: exitAfter)), as: UTF8.self)
                try await db.raw("""
                    INSERT INTO gateway_checkpoints (gateway_id, last_sequence, state, updated_by, updated_at)
                    VALUES (\(bind: gatewayID), \(bind: -1), \(bind: initial), \(bind: instance), \(bind: Date().timeIntervalSince1970))
                    ON CONFLICT (gateway_id) DO NOTHING
                    """).run()
                row = try await db.raw(select).first()
            }
            guard let row else {
                throw RegistryError(.notFound, field: "gateway", "no checkpoint for gateway \(gatewayID)")
            }
            let lastSequence = try row.int("last_sequence")
            if let sequence = batch.sequence, sequence <= lastSequence {
                return IngestResult(accepted: 0, duplicate: true, events: [])
            }
            var monitor = try JSONDecoder().decode(GatewayMonitor.self, from: Data(try row.string("state").utf8))
            let (changes, readings) = monitor.apply(batch.sightings)

            var events: [StoredEvent] = []
            var resolved: [BeaconIdentity: ResolvedIdentity?] = [:]
            for change in changes {
                if resolved[change.identity] == nil {
                    resolved[change.identity] = .some(try await Self.resolve(change.identity, db: db))
                }
                let meaning = resolved[change.identity] ?? nil
                let label = meaning?.label ?? change.identity.description
                guard let inserted = try await db.raw("""
                    INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at)
                    VALUES (\(bind: gatewayID), \(bind: change.transition.rawValue), \(bind: change.identity.uuid.uuidString),
                            \(bind: Int(change.identity.major)), \(bind: Int(change.identity.minor)), \(bind: meaning?.siteID),
                            \(bind: label), \(bind: change.time), \(bind: Date().timeIntervalSince1970))
                    RETURNING id
                    """).first() else { continue }
                events.append(try StoredEvent(id: try inserted.int("id"), gatewayID: gatewayID, siteID: meaning?.siteID, label: label,
                                              transition: change.transition, identity: change.identity, time: change.time))
            }

            if !readings.isEmpty {
                var insert = db.insert(into: "ranging_state")
                    .columns("gateway_id", "uuid", "major", "minor", "rssi", "distance", "proximity", "time")
                for reading in readings {
                    insert = insert.values(gatewayID, reading.identity.uuid.uuidString, Int(reading.identity.major), Int(reading.identity.minor),
                                           reading.rssi, reading.distance, reading.proximity, reading.time)
                }
                try await insert.onConflict(with: ["gateway_id", "uuid", "major", "minor"]) { update in
                    update.set(excludedValueOf: "rssi").set(excludedValueOf: "distance")
                        .set(excludedValueOf: "proximity").set(excludedValueOf: "time")
                }.run()
            }

            let state = try String(decoding: JSONEncoder().encode(monitor), as: UTF8.self)
            try await db.raw("""
                UPDATE gateway_checkpoints SET last_sequence = \(bind: batch.sequence ?? lastSequence), state = \(bind: state),
                updated_by = \(bind: instance), updated_at = \(bind: Date().timeIntervalSince1970) WHERE gateway_id = \(bind: gatewayID)
                """).run()
            return IngestResult(accepted: batch.sightings.count, duplicate: false, events: events)
        }
    }

    /// Which instance last moved a gateway's checkpoint, and its sequence (for operators and tests).
    public func checkpoint(gatewayID: String) async throws -> (sequence: Int, updatedBy: String)? {
        try await database.read { db in
            guard let row = try await db.raw("SELECT last_sequence, updated_by FROM gateway_checkpoints WHERE gateway_id = \(bind: gatewayID)").first() else {
                return nil
            }
            return (try row.int("last_sequence"), try row.string("updated_by"))
        }
    }
}
