@testable import BeaconServer
import BeaconTesting
import Foundation
import HummingbirdTesting
import Logging
import SQLKit
import Testing

/// A site's own `retainEvents`: its events go at the shorter of its limit and the server's
/// `--retain-events`, other sites' events keep the server's limit, and a site's limit applies
/// when the server has none.
@Suite struct SiteRetentionTests {
    static let now: Double = 1_000_000
    static let hour: Double = 3_600
    static let day: Double = 86_400

    static func insertEvents(_ count: Int, siteID: Int?, recordedAt: Double, into store: Store) async throws {
        try await store.database.transaction { db in
            for index in 0..<count {
                try await db.raw("""
                    INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at)
                    VALUES ('door', 'enter', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, \(bind: index % 1000), \(bind: siteID), 'x', \(bind: recordedAt), \(bind: recordedAt))
                    """).run()
            }
        }
    }

    /// Events left per site, `nil` for events of no site.
    static func countsBySite(_ store: Store) async throws -> [Int?: Int] {
        try await store.database.read { db in
            var counts: [Int?: Int] = [:]
            for row in try await db.raw("SELECT site_id, COUNT(*) AS n FROM region_events GROUP BY site_id").all() {
                counts[try row.optionalInt("site_id")] = try row.int("n")
            }
            return counts
        }
    }

    /// Two sites, one keeping events an hour and one with no limit of its own, plus events of
    /// no site; each has new events, events two hours old and events two days old. The hour
    /// site has more two-hour-old events than one batch.
    static func seed(_ store: Store) async throws -> (hourly: Site, unlimited: Site) {
        let office = try await Fixture.office(store)
        let hourly = try await store.createSite(NewSite(organisationID: office.organisation.id, name: "Kiosk", retainEvents: hour))
        let unlimited = office.site
        try await insertEvents(3, siteID: hourly.id, recordedAt: now - 10, into: store)
        try await insertEvents(1_500, siteID: hourly.id, recordedAt: now - 2 * hour, into: store)
        try await insertEvents(2, siteID: hourly.id, recordedAt: now - 2 * day, into: store)
        try await insertEvents(4, siteID: unlimited.id, recordedAt: now - 10, into: store)
        try await insertEvents(5, siteID: unlimited.id, recordedAt: now - 2 * hour, into: store)
        try await insertEvents(6, siteID: unlimited.id, recordedAt: now - 2 * day, into: store)
        try await insertEvents(7, siteID: nil, recordedAt: now - 2 * hour, into: store)
        try await insertEvents(8, siteID: nil, recordedAt: now - 2 * day, into: store)
        return (hourly, unlimited)
    }

    static func service(_ store: Store, serverLimit: Double?, timer: any Clock<Duration> = ContinuousClock()) -> EventRetentionService {
        EventRetentionService(store: store, retention: serverLimit.map { EventRetention(seconds: $0) }, clock: { now }, timer: timer, logger: Logger(label: "test"))
    }

    @Test(arguments: TestBackend.available)
    func aSiteKeepsTheShorterOfItsLimitAndTheServers(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let (hourly, unlimited) = try await Self.seed(store)
            let purged = try await Self.service(store, serverLimit: Self.day).purgeOnce()
            #expect(purged == 1_502 + 6 + 8)
            #expect(try await Self.countsBySite(store) == [hourly.id: 3, unlimited.id: 9, nil: 7])
        }
    }

    @Test(arguments: TestBackend.available)
    func aSiteLimitAppliesWithoutAServerLimit(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let (hourly, unlimited) = try await Self.seed(store)
            let purged = try await Self.service(store, serverLimit: nil).purgeOnce()
            #expect(purged == 1_502)
            #expect(try await Self.countsBySite(store) == [hourly.id: 3, unlimited.id: 15, nil: 15])
        }
    }

    @Test(arguments: TestBackend.available)
    func aSiteLimitLongerThanTheServersChangesNothing(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let (hourly, unlimited) = try await Self.seed(store)
            _ = try await store.changeSite(id: unlimited.id, retainEvents: .some(30 * Self.day))
            _ = try await Self.service(store, serverLimit: Self.day).purgeOnce()
            #expect(try await Self.countsBySite(store) == [hourly.id: 3, unlimited.id: 9, nil: 7])
        }
    }

    @Test(arguments: TestBackend.available)
    func oneSitesPurgeGoesABatchAtATime(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let (hourly, _) = try await Self.seed(store)
            var batches: [Int] = []
            while true {
                let purged = try await store.purgeEvents(siteID: hourly.id, storedBefore: Self.now - Self.hour, limit: 1_000)
                batches.append(purged)
                if purged == 0 { break }
            }
            #expect(batches == [1_000, 502, 0])
        }
    }

    @Test func theServiceRunsOnSiteLimitsAlone() async throws {
        try await TestBackend.sqlite.withStore { store in
            let (hourly, unlimited) = try await Self.seed(store)
            let timer = TestClock()
            let service = Self.service(store, serverLimit: nil, timer: timer)
            let running = Task { await service.run() }
            // The service sleeps on the test clock once its first round is over.
            await timer.waitForSleepers(1)
            running.cancel()
            await running.value
            #expect(try await Self.countsBySite(store) == [hourly.id: 3, unlimited.id: 15, nil: 15],
                    "only the site with a limit of its own was purged")
        }
    }
}
