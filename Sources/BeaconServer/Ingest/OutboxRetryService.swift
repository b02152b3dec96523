import Logging
import ServiceLifecycle

/// Retries the after-commit observers that failed (or whose instance stopped) on outbox rows
/// older than `retryAfter` seconds of the server's clock; rows this instance is working on are
/// left to it. A service of the server's group.
struct OutboxRetryService: Service {
    let ingestion: IngestService
    var interval: Duration = .seconds(1)
    var retryAfter: Double = 5
    var clock: any Clock<Duration> = ContinuousClock()
    let logger: Logger

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                // Before the migrations there is no outbox (and nothing to retry in it).
                guard ingestion.store.database.isMigrated else { continue }
                do {
                    try await ingestion.retryPendingObservers(before: ingestion.clock() - retryAfter)
                } catch {
                    logger.warning("retrying after-commit observers failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
