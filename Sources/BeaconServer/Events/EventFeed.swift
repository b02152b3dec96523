import Foundation
import ServiceLifecycle

/// The one reading loop behind both event streams (Server-Sent Events and WebSocket): stored
/// events after a cursor, a page at a time; then, when following, a wait for this instance's
/// signal or the poll interval and another read, which is how events stored by another
/// instance reach the reader.
struct EventFeed: Sendable {
    let store: Store
    let signal: EventSignal
    let filter: EventFilter
    let pollInterval: Duration

    /// Hands each non-empty page to `deliver` in id order and calls `idle` before each wait.
    /// Returns once caught up when not following, when the task is cancelled, or when the server
    /// shuts down: a following stream would otherwise hold a graceful shutdown until its
    /// client's departure showed on a keep-alive write.
    func run(after: Int, follow: Bool,
             deliver: ([StoredEvent]) async throws -> Void,
             idle: () async throws -> Void = {}) async throws {
        var last = after
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let page = try await store.events(after: last, filter: filter, limit: EventPage.maximumLimit)
            if let newest = page.last {
                try await deliver(page)
                last = newest.id
            }
            // A full page means more may be stored already: read on without waiting.
            if page.count == EventPage.maximumLimit { continue }
            guard follow else { return }
            try await idle()
            await signal.wait(timeout: pollInterval)
        }
    }
}
