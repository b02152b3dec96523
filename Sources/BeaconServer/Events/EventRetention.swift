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

/// Purges events older than their retention continuously, a batch at a time: the server's
/// limit over all events, and each site's own, shorter one over that site's events.
struct EventRetentionService: Service {
    let store: Store
    /// The server's limit (`--retain-events`); without one only sites with their own are purged.
    let serverSeconds: Double?
    let batch: Int
    let interval: Duration
    let clock: @Sendable () -> Double
    /// The pause between rounds is slept on it.
    let timer: any Clock<Duration>
    /// The live streams' ring, told when events were purged.
    let ring: EventRing?
    let logger: Logger

    init(store: Store, retention: EventRetention?, clock: @escaping @Sendable () -> Double,
         timer: any Clock<Duration> = ContinuousClock(), ring: EventRing? = nil, logger: Logger) {
        let pacing = retention ?? EventRetention(seconds: .infinity)
        self.store = store
        self.serverSeconds = retention?.seconds
        self.batch = pacing.batch
        self.interval = pacing.interval
        self.clock = clock
        self.timer = timer
        self.ring = ring
        self.logger = logger
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let purged = try await purgeOnce()
                    if purged > 0 { logger.info("purged events past their retention", metadata: ["events": "\(purged)"]) }
                } catch {
                    logger.warning("event purge failed", metadata: ["error": "\(error)"])
                }
                do { try await timer.sleep(for: interval) } catch { return }
            }
        }
    }

    /// One round: everything past the server's limit, then each site whose own limit is
    /// shorter (a longer one would find nothing the server's purge left).
    func purgeOnce() async throws -> Int {
        let now = clock()
        var purged = 0
        if let serverSeconds {
            purged += try await drain { try await store.purgeEvents(storedBefore: now - serverSeconds, limit: batch) }
        }
        for site in try await store.siteRetentions() where site.seconds < serverSeconds ?? .infinity {
            purged += try await drain { try await store.purgeEvents(siteID: site.siteID, storedBefore: now - site.seconds, limit: batch) }
        }
        if purged > 0 { await ring?.invalidate() }
        return purged
    }

    /// Runs `purgeBatch` until a batch comes back short, each batch its own transaction.
    private func drain(_ purgeBatch: () async throws -> Int) async throws -> Int {
        var purged = 0
        while !Task.isCancelled {
            let count = try await purgeBatch()
            purged += count
            if count < batch { break }
            await Task.yield()
        }
        return purged
    }
}
