import BeaconKit
import Foundation
import SQLKit

/// Collects treasure-hunt stamps from a device's enter events. It runs inside the batch's
/// transaction (``DeviceApplication``), so a retried batch, being a duplicate, never collects a
/// stamp or gives a reward twice; the run's primary key (hunt, device) holds one run per device.
struct HuntApplication: DeviceApplication {
    func observe(_ batch: DeviceBatch, db: any SQLDatabase) async throws -> [StoredEvent] {
        var rules: [Int: HuntRules] = [:]
        var runs: [Int: HuntRun] = [:]
        var changed: Set<Int> = []
        let enters = batch.events.compactMap { event -> (minor: UInt16, time: Double)? in
            guard event.siteID == batch.device.siteID, case .region(.didEnter(let region, let time)) = event.occurrence,
                  let minor = region.minor else { return nil }
            return (minor, time)
        }.sorted { $0.time < $1.time }
        for enter in enters {
            let stamps = try await db.raw("""
                SELECT s.hunt_id, s.number FROM hunt_stamps s JOIN zones z ON z.id = s.zone_id
                WHERE z.site_id = \(bind: batch.device.siteID) AND z.minor = \(bind: Int(enter.minor))
                """).all()
            for stamp in stamps {
                let huntID = try stamp.int("hunt_id")
                if rules[huntID] == nil { rules[huntID] = try await Self.rules(huntID: huntID, db: db) }
                guard let huntRules = rules[huntID] else { continue }
                if runs[huntID] == nil {
                    runs[huntID] = try await Self.run(huntID: huntID, device: batch.device, now: batch.now, db: db)
                }
                guard let run = runs[huntID],
                      let next = huntRules.collect(try stamp.int("number"), at: enter.time, into: run, now: batch.now) else { continue }
                runs[huntID] = next
                changed.insert(huntID)
            }
        }
        for huntID in changed.sorted() {
            if let run = runs[huntID] { try await Self.save(run, db: db) }
        }
        return []
    }

    static func rules(huntID: Int, db: any SQLDatabase) async throws -> HuntRules? {
        guard let hunt = try await Store.hunt(id: huntID, db: db) else { return nil }
        var positions: [Int: (x: Double, y: Double)] = [:]
        for row in try await db.raw("""
            SELECT s.number, z.x, z.y FROM hunt_stamps s JOIN zones z ON z.id = s.zone_id WHERE s.hunt_id = \(bind: huntID)
            """).all() {
            positions[try row.int("number")] = (try row.double("x"), try row.double("y"))
        }
        return HuntRules(hunt: hunt, positions: positions)
    }

    /// The device's run, or a new one. A device's batches are taken one at a time (its
    /// checkpoint row is locked), so the run needs no lock of its own.
    static func run(huntID: Int, device: Device, now: Double, db: any SQLDatabase) async throws -> HuntRun {
        if let row = try await db.raw("""
            SELECT \(unsafeRaw: Store.huntRunColumns) FROM hunt_runs r JOIN devices d ON d.id = r.device_id JOIN hunts h ON h.id = r.hunt_id
            WHERE r.hunt_id = \(bind: huntID) AND r.device_id = \(bind: device.id)
            """).first() {
            return try Store.decodeHuntRun(row)
        }
        return HuntRun(huntID: huntID, deviceID: device.id, name: device.name, status: .collecting, stamps: [], stampCount: 0,
                       duration: nil, reason: nil, reward: nil, rewardedAt: nil, updatedAt: now)
    }

    static func save(_ run: HuntRun, db: any SQLDatabase) async throws {
        let stamps = try ProximaJSON.text(run.stamps)
        try await db.raw("""
            INSERT INTO hunt_runs (hunt_id, device_id, status, stamps, stamp_count, duration, reason, rewarded_at, updated_at)
            VALUES (\(bind: run.huntID), \(bind: run.deviceID), \(bind: run.status.rawValue), \(bind: stamps), \(bind: run.stamps.count),
                    \(bind: run.duration), \(bind: run.reason), \(bind: run.rewardedAt), \(bind: run.updatedAt))
            ON CONFLICT (hunt_id, device_id) DO UPDATE SET status = excluded.status, stamps = excluded.stamps,
              stamp_count = excluded.stamp_count, duration = excluded.duration, reason = excluded.reason,
              rewarded_at = excluded.rewarded_at, updated_at = excluded.updated_at
            """).run()
    }
}
