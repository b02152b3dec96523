@testable import BeaconServer
import BeaconTesting
import Foundation
import Logging
import SQLKit
import Testing

/// `proxima serve --retain-events`: events past their retention are purged continuously, in
/// bounded batches, and newer ones stay.
@Suite struct EventRetentionTests {
    static func insertEvents(_ count: Int, recordedAt: Double, into store: Store) async throws {
        try await store.database.transaction { db in
            for index in 0..<count {
                try await db.raw("""
                    INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at)
                    VALUES ('door', 'enter', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, \(bind: index % 1000), NULL, 'x', \(bind: recordedAt), \(bind: recordedAt))
                    """).run()
            }
        }
    }

    static func count(_ store: Store) async throws -> Int {
        try await store.database.read { db in try await db.raw("SELECT COUNT(*) AS n FROM region_events").first()?.int("n") ?? 0 }
    }

    @Test(arguments: TestBackend.available)
    func purgesOnlyWhatIsPastTheRetentionABatchAtATime(backend: TestBackend) async throws {
        try await backend.withStore { store in
            try await Self.insertEvents(2_500, recordedAt: 100, into: store)
            try await Self.insertEvents(10, recordedAt: 10_000, into: store)
            var batches: [Int] = []
            while true {
                let purged = try await store.purgeEvents(storedBefore: 5_000, limit: 1_000)
                batches.append(purged)
                if purged == 0 { break }
            }
            #expect(batches == [1_000, 1_000, 500, 0])
            #expect(try await Self.count(store) == 10)
        }
    }

    @Test func theServiceKeepsPurging() async throws {
        try await TestBackend.sqlite.withStore { store in
            try await Self.insertEvents(1_200, recordedAt: 100, into: store)
            try await Self.insertEvents(3, recordedAt: 99_000, into: store)
            let timer = TestClock()
            var retention = EventRetention(seconds: 3_600)
            retention.interval = .seconds(10)
            let service = EventRetentionService(store: store, retention: retention, clock: { 100_000 }, timer: timer, logger: Logger(label: "test"))
            let running = Task { await service.run() }
            // The service sleeps on the test clock once a round is over.
            await timer.waitForSleepers(1)
            #expect(try await Self.count(store) == 3)
            // Events past the retention that come later go in the next round, not before it.
            try await Self.insertEvents(5, recordedAt: 200, into: store)
            #expect(try await Self.count(store) == 8)
            timer.advance(by: .seconds(10))
            await timer.waitForSleepers(1)
            #expect(try await Self.count(store) == 3)
            running.cancel()
            await running.value
        }
    }

    @Test(arguments: [("90d", 7_776_000.0), ("12h", 43_200), ("30m", 1_800), ("3600", 3_600)])
    func durationsParse(text: String, seconds: Double) throws {
        #expect(try EventRetention(parsing: text).seconds == seconds)
    }

    @Test(arguments: ["30s", "abc", "-5d", "", "infd"])
    func badDurationsNameTheOption(text: String) {
        #expect(throws: ServerInputError.self) { try EventRetention(parsing: text) }
        do { _ = try EventRetention(parsing: text) } catch { #expect(error.field == "retain-events") }
    }
}
