import Foundation
import SQLKit

/// A site's own event retention (`retainEvents` on a site): its events are purged at the
/// shorter of this and the server's `--retain-events`.
enum SiteRetention {
    /// Shorter than a minute would purge events before a dashboard or webhook consumer caught
    /// up with them, the same floor as `--retain-events`.
    static let minimumSeconds: Double = 60

    static let migration = Migrations.Migration(version: 18, name: "event retention per site") { _ in
        ["ALTER TABLE sites ADD COLUMN retain_events DOUBLE PRECISION"]
    }

    static func check(_ seconds: Double?) throws(RegistryError) {
        guard let seconds else { return }
        guard seconds.isFinite, seconds >= minimumSeconds else {
            throw RegistryError(.invalid, field: "retainEvents",
                                "expected seconds >= \(Int(minimumSeconds)) or null for the server's limit, found \(seconds)")
        }
    }
}

/// The body of `PATCH /v1/sites/{id}`: a field left out stays as it is; `retainEvents: null`
/// returns the site to the server's limit.
struct SiteChange: Decodable, Sendable {
    /// Outer nil: left out; inner nil: sent as null.
    var retainEvents: Double??

    enum CodingKeys: String, CodingKey { case retainEvents }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.retainEvents) {
            retainEvents = .some(try container.decodeIfPresent(Double.self, forKey: .retainEvents))
        }
    }
}

extension Store {
    /// Sets the site's own retention when `retainEvents` is given (`.some(nil)` clears it) and
    /// returns the site as stored.
    public func changeSite(id: Int, retainEvents: Double??) async throws -> Site {
        try await database.transaction { db in
            _ = try await Self.site(id: id, db: db)
            if let retainEvents {
                try SiteRetention.check(retainEvents)
                try await db.raw("UPDATE sites SET retain_events = \(bind: retainEvents) WHERE id = \(bind: id)").run()
            }
            return try await Self.site(id: id, db: db)
        }
    }

    /// Each site with its own retention and its seconds, in id order.
    public func siteRetentions() async throws -> [(siteID: Int, seconds: Double)] {
        try await database.read { db in
            try await db.raw("SELECT id, retain_events FROM sites WHERE retain_events IS NOT NULL ORDER BY id").all()
                .map { (siteID: try $0.int("id"), seconds: try $0.double("retain_events")) }
        }
    }

    /// Deletes at most `limit` of one site's oldest events stored before `cutoff` (server
    /// time), walking the `(site_id, id)` index; returns how many went.
    public func purgeEvents(siteID: Int, storedBefore cutoff: Double, limit: Int) async throws -> Int {
        try await database.transaction { db in
            let ids = try await db.raw("""
                SELECT id FROM region_events WHERE site_id = \(bind: siteID) AND recorded_at < \(bind: cutoff) ORDER BY id LIMIT \(bind: limit)
                """).all().map { try $0.int("id") }
            guard let last = ids.last else { return 0 }
            try await db.raw("""
                DELETE FROM region_events WHERE site_id = \(bind: siteID) AND id <= \(bind: last) AND recorded_at < \(bind: cutoff)
                """).run()
            return ids.count
        }
    }
}
