import Foundation

/// One page of the stored-event list: at most `limit` events after a cursor, oldest first, and
/// the cursor of the next page when more events were stored than fitted.
public struct EventPage: Sendable, Hashable {
    /// Events per page when the reader does not ask (`?limit=`).
    public static let defaultLimit = 100
    /// The most events one page holds, which bounds the memory and time of one read.
    public static let maximumLimit = 1000

    public var events: [StoredEvent]
    /// The `after` that reads the next page; nil when this page ends at the newest stored event.
    public var nextAfter: Int?

    /// `?limit=`: absent means ``defaultLimit``; anything but a whole number in 1…``maximumLimit``
    /// is refused, naming the field.
    public static func limit(_ text: String?) throws(ServerInputError) -> Int {
        guard let text else { return defaultLimit }
        guard let limit = Int(text), (1...maximumLimit).contains(limit) else {
            throw ServerInputError(field: "limit", reason: "expected a whole number of events in 1…\(maximumLimit), found '\(text.prefix(40))'")
        }
        return limit
    }
}

extension Store {
    /// Reads one more event than asked for, so the page knows whether another follows without a
    /// second query.
    public func eventPage(after id: Int, filter: EventFilter = EventFilter(), limit: Int) async throws -> EventPage {
        let events = try await events(after: id, filter: filter, limit: limit + 1)
        guard events.count > limit else { return EventPage(events: events, nextAfter: nil) }
        let page = Array(events.prefix(limit))
        return EventPage(events: page, nextAfter: page.last?.id)
    }
}
