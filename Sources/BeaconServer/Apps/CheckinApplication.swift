import BeaconKit
import Foundation
import SQLKit

/// Feeds each device's enters and exits of its site's check-in zones to ``CheckinRule`` and
/// stores the visit it returns, the check-ins and the loyalty counts. Runs in the batch's
/// transaction; a check-in is also unique per device, zone and visit start, so no path can
/// count one visit twice.
struct CheckinApplication: DeviceApplication {
    func observe(_ batch: DeviceBatch, db: any SQLDatabase) async throws -> [StoredEvent] {
        let site = try await Store.site(id: batch.device.siteID, db: db)
        var transitions: [UInt16: [CheckinRule.Transition]] = [:]
        for event in batch.events {
            guard case .region(let beaconEvent) = event.occurrence else { continue }
            let region = beaconEvent.region
            guard region.uuid == site.uuid, region.major == site.major, let minor = region.minor else { continue }
            switch beaconEvent {
            case .didEnter(_, let time): transitions[minor, default: []].append(.enter(time))
            case .didExit(_, let time): transitions[minor, default: []].append(.exit(time))
            default: continue
            }
        }
        let now = batch.sightings.map(\.time).max()
        // One read of the device's visits: only zones with a transition in the batch or a visit
        // under way are stepped, so a batch costs the same whatever the site's number of zones.
        let visits = try await db.raw("""
            SELECT zone_id, visit_start, inside_since, dwell_before, last_exit, latest, checked_in_at FROM checkin_visits
            WHERE device_id = \(bind: batch.device.id)
            """).all()
        var stored: [Int: CheckinRule.Visit] = [:]
        for row in visits {
            stored[try row.int("zone_id")] = CheckinRule.Visit(
                start: try row.double("visit_start"), insideSince: try row.optionalDouble("inside_since"),
                dwellBefore: try row.double("dwell_before"), lastExit: try row.optionalDouble("last_exit"),
                latest: try row.double("latest"), checkedInAt: try row.optionalDouble("checked_in_at"))
        }
        // The rules of just those zones: the ones entered or left in this batch, and those of the
        // device's visits (integers, so listed in the statement as they are).
        guard !transitions.isEmpty || !stored.isEmpty else { return [] }
        let minors = transitions.keys.map { String($0) }.joined(separator: ", ")
        let zoneIDs = stored.keys.map { String($0) }.joined(separator: ", ")
        let zones = try await db.raw(SQLQueryString("""
            SELECT c.zone_id, c.dwell, c.absence, z.minor, z.label FROM checkin_zones c JOIN zones z ON z.id = c.zone_id
            WHERE c.site_id = \(bind: batch.device.siteID) AND (z.minor IN (\(unsafeRaw: minors.isEmpty ? "-1" : minors))
              OR c.zone_id IN (\(unsafeRaw: zoneIDs.isEmpty ? "-1" : zoneIDs)))
            """)).all()
        var events: [StoredEvent] = []
        for row in zones {
            let zoneID = try row.int("zone_id"), minor = try row.uint16("minor")
            let zoneTransitions = transitions[minor] ?? []
            guard !zoneTransitions.isEmpty || stored[zoneID] != nil else { continue }
            let rule = CheckinRule(dwell: try row.double("dwell"), absence: try row.double("absence"))
            let zone = ApplicationOccurrence.Zone(id: zoneID, label: try row.string("label"), uuid: site.uuid, major: site.major, minor: minor)
            let checkIns = try await step(rule, zoneID: zoneID, device: batch.device.id, stored: stored[zoneID],
                                          transitions: zoneTransitions, now: now, db: db)
            for checkIn in checkIns {
                let occurrence = ApplicationOccurrence(kind: .checkIn, time: checkIn.time, device: batch.device.id, zone: zone,
                                                       visitStart: checkIn.visitStart)
                if let event = try await occurrence.store(siteID: site.id, now: batch.now, db: db) { events.append(event) }
            }
        }
        return events
    }

    /// Steps one zone's visit and stores what it decided; returns the check-ins counted now
    /// (not those a resent batch already counted).
    private func step(_ rule: CheckinRule, zoneID: Int, device: String, stored: CheckinRule.Visit?, transitions: [CheckinRule.Transition],
                      now: Double?, db: any SQLDatabase) async throws -> [CheckinRule.CheckIn] {
        // Only a device inside the zone, or one with transitions of it, has anything to do.
        guard !transitions.isEmpty || stored?.insideSince != nil else {
            if let stored, let now, rule.isOver(stored, at: now) {
                try await db.raw("DELETE FROM checkin_visits WHERE device_id = \(bind: device) AND zone_id = \(bind: zoneID)").run()
            }
            return []
        }
        let (visit, checkIns) = rule.step(stored, transitions: transitions, now: now)
        var counted: [CheckinRule.CheckIn] = []
        for checkIn in checkIns {
            let inserted = try await db.raw("""
                INSERT INTO checkins (device_id, zone_id, visit_start, time)
                VALUES (\(bind: device), \(bind: zoneID), \(bind: checkIn.visitStart), \(bind: checkIn.time))
                ON CONFLICT (device_id, zone_id, visit_start) DO NOTHING RETURNING id
                """).all()
            guard !inserted.isEmpty else { continue }
            counted.append(checkIn)
            try await db.raw("""
                INSERT INTO checkin_loyalty (device_id, zone_id, count, last) VALUES (\(bind: device), \(bind: zoneID), 1, \(bind: checkIn.time))
                ON CONFLICT (device_id, zone_id) DO UPDATE SET count = checkin_loyalty.count + 1, last = excluded.last
                """).run()
        }
        guard let visit, visit != stored else { return counted }
        try await db.raw("""
            INSERT INTO checkin_visits (device_id, zone_id, visit_start, inside_since, dwell_before, last_exit, latest, checked_in_at)
            VALUES (\(bind: device), \(bind: zoneID), \(bind: visit.start), \(bind: visit.insideSince), \(bind: visit.dwellBefore),
                    \(bind: visit.lastExit), \(bind: visit.latest), \(bind: visit.checkedInAt))
            ON CONFLICT (device_id, zone_id) DO UPDATE SET visit_start = excluded.visit_start, inside_since = excluded.inside_since,
              dwell_before = excluded.dwell_before, last_exit = excluded.last_exit, latest = excluded.latest, checked_in_at = excluded.checked_in_at
            """).run()
        return counted
    }
}
