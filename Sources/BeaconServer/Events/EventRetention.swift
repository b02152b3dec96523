import Foundation
import Logging
import ServiceLifecycle
import SQLKit

/// How long stored events are kept (`proxima serve --retain-events`). The server stores no raw
/// sightings: each gateway's engine state is bounded by its beacon limit, and the events are
/// what grows with time, so they are what a retention limit purges.
public struct EventRetention: Sendable, Hashable {
    /// Seconds an event is kept after the server stored it.
    public var seconds: Double
    /// Events deleted per statement, so a first purge of years of events never holds the
    /// database for long.
    public var batch = 1_000
    /// How often the purge runs.
    public var interval: Duration = .seconds(10)

    public init(seconds: Double) {
        self.seconds = seconds
    }

    /// `90d`, `12h`, `30m`, `45s` or a number of seconds; at least a minute.
    public init(parsing text: String) throws(ServerInputError) {
        let units: [(String, Double)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
        var value: Double?
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            value = Double(text.dropLast()).map { $0 * scale }
            break
        }
        let seconds = value ?? Double(text)
        guard let seconds, seconds.isFinite, seconds >= 60 else {
            throw ServerInputError(field: "retain-events", reason: "expected a duration of at least a minute such as 90d, 12h or 3600, found '\(text.prefix(40))'")
        }
        self.init(seconds: seconds)
    }
}

extension Store {
    /// Deletes at most `limit` of the oldest events stored before `cutoff` (server time);
    /// returns how many went.
    public func purgeEvents(storedBefore cutoff: Double, limit: Int) async throws -> Int {
        try await database.transaction { db in
            let ids = try await db.raw("""
                SELECT id FROM region_events WHERE recorded_at < \(bind: cutoff) ORDER BY id LIMIT \(bind: limit)
                """).all().map { try $0.int("id") }
            guard let last = ids.last else { return 0 }
            try await db.raw("DELETE FROM region_events WHERE id <= \(bind: last) AND recorded_at < \(bind: cutoff)").run()
            return ids.count
        }
    }
}

/// Purges events older than the retention continuously, a batch at a time.
struct EventRetentionService: Service {
    let store: Store
    let retention: EventRetention
    let clock: @Sendable () -> Double
    let logger: Logger

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    var purged = 0
                    while !Task.isCancelled {
                        let count = try await store.purgeEvents(storedBefore: clock() - retention.seconds, limit: retention.batch)
                        purged += count
                        if count < retention.batch { break }
                        await Task.yield()
                    }
                    if purged > 0 { logger.info("purged events past their retention", metadata: ["events": "\(purged)"]) }
                } catch {
                    logger.warning("event purge failed", metadata: ["error": "\(error)"])
                }
                do { try await Task.sleep(for: retention.interval) } catch { return }
            }
        }
    }
}
