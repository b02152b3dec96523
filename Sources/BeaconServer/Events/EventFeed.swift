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

    /// Hands each non-empty page to `deliver` in id order and calls `idle` before each wait.
    /// Returns once caught up when not following, when the task is cancelled, or when the server
    /// shuts down: a following stream would otherwise hold a graceful shutdown until its
    /// client's departure showed on a keep-alive write.
    func run(after: Int, follow: Bool,
             deliver: ([StoredEvent]) async throws -> Void,
             idle: () async throws -> Void = {}) async throws {
        var last = after
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let limit = EventPage.maximumLimit
            var full = false
            switch try await ring.read(after: last, filter: filter, limit: limit) {
            case .events(let events, let through):
                if !events.isEmpty { try await deliver(events) }
                last = through
                full = events.count == limit
            case .older(let floor):
                onDatabaseRead()
                let page = try await store.events(after: last, filter: filter, limit: limit)
                if !page.isEmpty { try await deliver(page) }
                full = page.count == limit
                // Every event up to the ring's floor is in the database, so a short page has
                // caught up with the ring.
                last = full ? page[page.count - 1].id : max(page.last?.id ?? last, floor)
            }
            // A full page means more may be stored already: read on without waiting.
            if full { continue }
            guard follow else { return }
            try await idle()
            try await ring.wait(after: last, timeout: pollInterval)
        }
    }
}
