import BeaconKit
import Foundation
import SQLKit

/// The choice among near offers, ranked: pure, so the ranking is tested without a server.
enum OfferRanking {
    static func proximityRank(_ proximity: String) -> Int {
        switch proximity {
        case "immediate": 0
        case "near": 1
        case "far": 2
        default: 3
        }
    }

    /// The options within reach, by proximity class, then accuracy (smaller first), then offer
    /// id; at most `maxChoices`. Every near zone stays a choice: none is taken to be "the" one.
    static func choices(_ candidates: [OfferOption], settings: OfferSettings) -> [OfferOption] {
        let near = candidates.filter { proximityRank($0.proximity) < 3 && $0.accuracy.isFinite && $0.accuracy <= settings.reach }
        let ranked = near.sorted {
            (proximityRank($0.proximity), $0.accuracy, $0.offerID) < (proximityRank($1.proximity), $1.accuracy, $1.offerID)
        }
        return Array(ranked.prefix(settings.maxChoices))
    }

    /// What identifies a choice, so the same choice is not offered again batch after batch.
    static func key(_ choices: [OfferOption]) -> String {
        choices.map(\.offerID).sorted().map(String.init).joined(separator: ",")
    }
}

/// Offers near zones' offers to a device as a ranked choice, within the site's per-device rate
/// limit. It reads the device's ranging state, which ingestion keeps only for devices that
/// consented to positions, so a device that did not is never offered anything. Inside the
/// batch's transaction, so a resent batch is neither offered nor counted twice.
struct OfferApplication: DeviceApplication {
    func observe(_ batch: DeviceBatch, db: any SQLDatabase) async throws -> [StoredEvent] {
        guard batch.device.consent.positions, let latest = batch.sightings.map(\.time).max() else { return [] }
        let siteID = batch.device.siteID
        let site = try await Store.site(id: siteID, db: db)
        let settings = try await Store.offerSettings(siteID: siteID, db: db).settings
        let rows = try await db.raw("""
            SELECT o.id, o.zone_id, o.title, o.body, z.label, r.proximity, r.distance
            FROM ranging_state r JOIN zones z ON z.site_id = \(bind: siteID) AND z.minor = r.minor
            JOIN offers o ON o.zone_id = z.id
            WHERE r.gateway_id = \(bind: batch.device.id) AND r.uuid = \(bind: site.uuid.uuidString) AND r.major = \(bind: Int(site.major))
              AND r.time >= \(bind: latest - settings.freshness) AND r.distance IS NOT NULL
            """).all()
        let candidates = try rows.map { row in
            OfferOption(offerID: try row.int("id"), zoneID: try row.int("zone_id"), label: try row.string("label"), title: try row.string("title"),
                        body: try row.string("body"), proximity: try row.string("proximity"), accuracy: try row.double("distance"))
        }
        let choices = OfferRanking.choices(candidates, settings: settings)
        let key = OfferRanking.key(choices)
        var state = try await DeviceOfferState.load(deviceID: batch.device.id, db: db)
        guard key != state.lastChoice else { return [] }
        state.lastChoice = key
        var events: [StoredEvent] = []
        if !choices.isEmpty {
            if latest - state.windowStart >= settings.window || latest < state.windowStart {
                state.windowStart = latest
                state.inWindow = 0
            }
            if state.inWindow < settings.perWindow {
                state.inWindow += 1
                state.delivered += 1
                try await db.raw("""
                    INSERT INTO offer_deliveries (device_id, time, choices, created_at)
                    VALUES (\(bind: batch.device.id), \(bind: latest), \(bind: try ProximaJSON.text(choices)), \(bind: batch.now))
                    """).run()
                try await db.raw("""
                    DELETE FROM offer_deliveries WHERE device_id = \(bind: batch.device.id) AND id NOT IN
                      (SELECT id FROM offer_deliveries WHERE device_id = \(bind: batch.device.id) ORDER BY id DESC LIMIT \(bind: OfferLimits().deliveriesKept))
                    """).run()
                try await Self.count(siteID: siteID, delivered: 1, refused: 0, db: db)
                let offers = choices.map { ApplicationOccurrence.Offer(offerID: $0.offerID, zoneID: $0.zoneID, title: $0.title, proximity: $0.proximity) }
                let occurrence = ApplicationOccurrence(kind: .offersDelivered, time: latest, device: batch.device.id, offers: offers)
                if let event = try await occurrence.store(siteID: siteID, now: batch.now, db: db) { events.append(event) }
            } else {
                state.refused += 1
                try await Self.count(siteID: siteID, delivered: 0, refused: 1, db: db)
            }
        }
        try await state.save(db: db)
        return events
    }

    static func count(siteID: Int, delivered: Int, refused: Int, db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO offer_settings (site_id, settings, delivered, refused)
            VALUES (\(bind: siteID), \(bind: try ProximaJSON.text(OfferSettings.standard)), \(bind: delivered), \(bind: refused))
            ON CONFLICT (site_id) DO UPDATE SET delivered = offer_settings.delivered + excluded.delivered,
              refused = offer_settings.refused + excluded.refused
            """).run()
    }
}

/// One device's rate-limit window and counts.
struct DeviceOfferState {
    var deviceID: String
    var lastChoice = ""
    var windowStart = -Double.greatestFiniteMagnitude
    var inWindow = 0
    var delivered = 0
    var refused = 0

    static func load(deviceID: String, db: any SQLDatabase) async throws -> DeviceOfferState {
        guard let row = try await db.raw("""
            SELECT last_choice, window_start, in_window, delivered, refused FROM offer_devices WHERE device_id = \(bind: deviceID)
            """).first() else { return DeviceOfferState(deviceID: deviceID) }
        return DeviceOfferState(deviceID: deviceID, lastChoice: try row.string("last_choice"), windowStart: try row.double("window_start"),
                                inWindow: try row.int("in_window"), delivered: try row.int("delivered"), refused: try row.int("refused"))
    }

    func save(db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO offer_devices (device_id, last_choice, window_start, in_window, delivered, refused)
            VALUES (\(bind: deviceID), \(bind: lastChoice), \(bind: windowStart), \(bind: inWindow), \(bind: delivered), \(bind: refused))
            ON CONFLICT (device_id) DO UPDATE SET last_choice = excluded.last_choice, window_start = excluded.window_start,
              in_window = excluded.in_window, delivered = excluded.delivered, refused = excluded.refused
            """).run()
    }
}
