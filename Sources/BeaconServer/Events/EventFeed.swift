import Foundation
import ServiceLifecycle

/// The one reading loop behind both event streams (Server-Sent Events and WebSocket): events
/// after a cursor from the instance's ``EventRing``, or from the database a page at a time while
/// the cursor is older than the ring; then, when following, a wait on the ring (which reads the
/// database once per poll interval for the whole instance, for other instances' events).
struct EventFeed: Sendable {
    let store: Store
    let ring: EventRing
    let filter: EventFilter
    let pollInterval: Duration
    let onDatabaseRead: @Sendable () -> Void
    /// Why the stream must end early (its token revoked or expired), on the server's clock.
    let end: StreamEnd
    let now: @Sendable () -> Double
    /// The server's shared budget for reads behind the ring, and the token this stream's reads
    /// are counted against.
    let catchUp: CatchUpReads
    let tokenID: Int

    /// Events per database read behind the ring: what one stream holds in memory at once, and
    /// how long one read holds SQLite's connection from everyone else.
    static let catchUpPage = 250

    /// Hands each non-empty page to `deliver` in id order and calls `idle` before each wait.
    /// Returns once caught up when not following, when the task is cancelled, or when the server
    /// shuts down: a following stream would otherwise hold a graceful shutdown until its
    /// client's departure showed on a keep-alive write. Returns why when the stream was told to
    /// end (``StreamEnd``), for the caller to tell its client.
    @discardableResult
    func run(after: Int, follow: Bool,
             deliver: ([StoredEvent]) async throws -> Void,
             idle: () async throws -> Void = {}) async throws -> String? {
        var last = after
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if let reason = end.reason(now: now()) { return reason }
            let limit = EventPage.maximumLimit
            var full = false
            switch try await ring.read(after: last, filter: filter, limit: limit) {
            case .events(let events, let through):
                if !events.isEmpty { try await deliver(events) }
                last = through
                full = events.count == limit
            case .older(let floor):
                onDatabaseRead()
                let page = try await catchUp.withSlot(tokenID: tokenID) {
                    try await store.events(after: last, filter: filter, limit: Self.catchUpPage)
                }
                if !page.isEmpty { try await deliver(page) }
                full = page.count == Self.catchUpPage
                // Every event up to the ring's floor is in the database, so a short page has
                // caught up with the ring.
                last = full ? page[page.count - 1].id : max(page.last?.id ?? last, floor)
            }
            // A full page means more may be stored already: read on without waiting.
            if full { continue }
            guard follow else { return nil }
            try await idle()
            try await ring.wait(after: last, timeout: end.wait(atMost: pollInterval, now: now()))
        }
        return nil
    }
}
