import BeaconKit
import Foundation
import SQLKit

/// Help requests' part of ingestion, run on every accepted device batch: it remembers the fixed
/// beacon each phone hears best (what a request is filed with, and the visitor's room while it
/// is live), and turns a helper's phone's ranging of the visitor's beacon into the request's
/// live distance, marking the request reached when that ranging says immediate.
public struct HelpRequestApplication: DeviceApplication {
    public let limits: HelpRequestLimits
    public let zones: ProximityZones

    public init(limits: HelpRequestLimits = HelpRequestLimits(), zones: ProximityZones = .default) {
        self.limits = limits
        self.zones = zones
    }

    public func observe(_ batch: DeviceBatch, db: any SQLDatabase) async throws -> [StoredEvent] {
        try await rememberNearest(batch, db: db)
        try await rangeVisitors(batch, db: db)
        // Help requests' changes go out on their own stream (GET /v1/help-requests/events).
        return []
    }

    /// Mean RSSI per iBeacon identity of the batch, with the measured power it advertised.
    static func strengths(_ sightings: [Sighting]) -> [BeaconIdentity: (rssi: Double, power: MeasuredPower, time: Double)] {
        var sums: [BeaconIdentity: (total: Double, count: Int, power: MeasuredPower, time: Double)] = [:]
        for sighting in sightings {
            guard let frame = sighting.frame.iBeacon, let rssi = sighting.rssi else { continue }
            var entry = sums[frame.identity] ?? (0, 0, frame.measuredPower, sighting.time)
            entry.total += Double(rssi)
            entry.count += 1
            entry.time = max(entry.time, sighting.time)
            sums[frame.identity] = entry
        }
        return sums.mapValues { ($0.total / Double($0.count), $0.power, $0.time) }
    }

    /// The beacon a phone is nearest: with positions consent, the fixed beacon its batch heard
    /// loudest; with events consent only, the beacon of its latest enter event (what it agreed
    /// the server may keep), so no signal strengths are kept for it.
    static func nearest(_ batch: DeviceBatch) -> (identity: BeaconIdentity, rssi: Double, time: Double)? {
        if batch.device.consent.positions {
            let fixed = strengths(batch.sightings).filter { $0.key.major != HelpRequestLimits.major }
            return fixed.max(by: { ($0.value.rssi, $1.key) < ($1.value.rssi, $0.key) }).map { ($0.key, $0.value.rssi, $0.value.time) }
        }
        for event in batch.events.reversed() {
            guard case .region(.didEnter(let region, let time)) = event.occurrence, let major = region.major, let minor = region.minor,
                  major != HelpRequestLimits.major else { continue }
            return (BeaconIdentity(uuid: region.uuid, major: major, minor: minor), 0, time)
        }
        return nil
    }

    private func rememberNearest(_ batch: DeviceBatch, db: any SQLDatabase) async throws {
        guard let (identity, rssi, time) = Self.nearest(batch) else { return }
        let label = try await Store.resolve(identity, db: db)?.label
        try await db.raw("""
            INSERT INTO help_device_nearest (device_id, uuid, major, minor, label, rssi, time)
            VALUES (\(bind: batch.device.id), \(bind: identity.uuid.uuidString), \(bind: Int(identity.major)), \(bind: Int(identity.minor)),
                    \(bind: label), \(bind: rssi), \(bind: time))
            ON CONFLICT (device_id) DO UPDATE SET uuid = excluded.uuid, major = excluded.major, minor = excluded.minor,
              label = excluded.label, rssi = excluded.rssi, time = excluded.time
            """).run()
        let nearest = HelpBeacon(uuid: identity.uuid, major: identity.major, minor: identity.minor, label: label)
        try await db.raw("""
            UPDATE help_requests SET nearest = \(bind: try ProximaJSON.text(nearest))
            WHERE device_id = \(bind: batch.device.id) AND state IN ('open', 'acknowledged', 'reached')
            """).run()
    }

    private func rangeVisitors(_ batch: DeviceBatch, db: any SQLDatabase) async throws {
        let rows = try await db.raw("""
            SELECT id, uuid, major, minor, distance_changed_at FROM help_requests
            WHERE helper_device_id = \(bind: batch.device.id) AND state = 'acknowledged' LIMIT 20
            """).all()
        guard !rows.isEmpty else { return }
        let heard = Self.strengths(batch.sightings)
        for row in rows {
            let identity = BeaconIdentity(uuid: try row.uuid("uuid"), major: try row.uint16("major"), minor: try row.uint16("minor"))
            guard let strength = heard[identity] else { continue }
            let reading = try await reading(of: identity, strength: strength, batch: batch, db: db)
            let id = try row.int("id")
            try await db.raw("UPDATE help_requests SET helper_distance = \(bind: try ProximaJSON.text(reading)) WHERE id = \(bind: id)").run()
            if reading.proximity == Proximity.immediate.description {
                _ = try await Store.reach(id: id, by: "ranging", now: batch.now, db: db)
            } else if batch.now - (try row.optionalDouble("distance_changed_at") ?? -.infinity) >= limits.distanceChangeInterval {
                try await db.raw("UPDATE help_requests SET distance_changed_at = \(bind: batch.now) WHERE id = \(bind: id)").run()
                _ = try await Store.recordHelpChange("distance", requestID: id, now: batch.now, db: db)
            }
        }
    }

    /// The engine's ranging of the visitor's beacon when the helper's phone shares positions
    /// (stored just before applications run); otherwise this batch's mean RSSI through the
    /// engine's default distance model.
    private func reading(of identity: BeaconIdentity, strength: (rssi: Double, power: MeasuredPower, time: Double),
                         batch: DeviceBatch, db: any SQLDatabase) async throws -> HelpDistance {
        let name = batch.device.name ?? Device.gatewayName(id: batch.device.id)
        if batch.device.consent.positions, let row = try await db.raw("""
            SELECT distance, proximity, time FROM ranging_state WHERE gateway_id = \(bind: batch.device.id)
              AND uuid = \(bind: identity.uuid.uuidString) AND major = \(bind: Int(identity.major)) AND minor = \(bind: Int(identity.minor))
            """).first() {
            return HelpDistance(distance: try row.optionalDouble("distance"), proximity: try row.string("proximity"),
                                receiverID: batch.device.id, receiverName: name, time: try row.double("time"))
        }
        let distance = DistanceModel.default.distance(rssi: strength.rssi, measuredPower: strength.power)
        return HelpDistance(distance: distance, proximity: zones.zone(for: distance).description,
                            receiverID: batch.device.id, receiverName: name, time: strength.time)
    }
}
