import DequeModule
import Foundation

/// The recent events of this instance, in id order, which every live stream (Server-Sent Events,
/// WebSocket) of the instance reads instead of the database. The publisher puts each stored
/// event here once; the database is read only to catch up a reader whose cursor is older than
/// the ring, and once per poll interval for the whole instance (not per reader) for events another
/// instance stored.
///
/// Ids are released to readers in order, without holes: batches commit in id order but may
/// publish out of it, so an event whose predecessor has not been published yet waits. A hole
/// that a read of the database (begun after the waiting event was published) does not fill was
/// a rolled-back transaction, and the waiting events are released.
public actor EventRing {
    /// What a reader gets: the events after its cursor that match its filter, and the cursor to
    /// read from next; or that its cursor is older than the ring (read the database).
    public enum Read: Sendable {
        case events([StoredEvent], through: Int)
        case older(than: Int)
    }

    private let store: Store
    private let capacity: Int
    private let clock: any Clock<Duration>
    private let onDatabaseRead: @Sendable () -> Void
    private var held: Deque<StoredEvent> = []
    /// Every event with an id in (floor, released] that was stored is in `held`.
    private var floor = 0
    private var released = 0
    private var prepared = false
    /// Published events waiting for a smaller id, by id, with the publication's number.
    private var waiting: [Int: (event: StoredEvent, publication: Int)] = [:]
    private var publications = 0
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var timedOut: Set<Int> = []
    private var nextWaiter = 0
    /// The one database read under way (the start or a refresh), shared by every reader.
    private var refresh: (number: Int, task: Task<Void, any Error>)?
    private var refreshNumber = 0
    /// Refreshes completed, so readers that timed out together share one.
    private var refreshes = 0

    public init(store: Store, capacity: Int = 4_096, clock: any Clock<Duration> = ContinuousClock(),
                onDatabaseRead: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.capacity = max(capacity, 1)
        self.clock = clock
        self.onDatabaseRead = onDatabaseRead
    }

    /// Events this instance stored, as soon as they committed. Before the first reader the
    /// ring holds nothing: its first read starts it at the database's newest id.
    public func publish(_ events: [StoredEvent]) {
        guard prepared else { return }
        publications += 1
        for event in events where event.id > released {
            waiting[event.id] = (event, publications)
        }
        releaseInOrder()
        // A hole no reader's refresh has closed (nobody is following): bounded all the same.
        if waiting.count > capacity { releaseWaiting(publishedBefore: publications) }
    }

    /// The events after `cursor` matching `filter`, at most `limit`.
    public func read(after cursor: Int, filter: EventFilter, limit: Int) async throws -> Read {
        try await prepare()
        guard cursor >= floor else { return .older(than: floor) }
        guard cursor < released else { return .events([], through: max(cursor, released)) }
        var index = firstIndex(after: cursor)
        var found: [StoredEvent] = []
        while index < held.endIndex {
            let event = held[index]
            if filter.matches(event) {
                found.append(event)
                if found.count == limit { return .events(found, through: event.id) }
            }
            index += 1
        }
        return .events(found, through: released)
    }

    /// Returns once an event after `cursor` is released or after `timeout`; on a timeout the
    /// ring reads the database once for all its readers, for events of other instances and
    /// for holes.
    public func wait(after cursor: Int, timeout: Duration) async throws {
        guard released <= cursor else { return }
        let id = nextWaiter
        nextWaiter += 1
        let seen = refreshes
        let clock = self.clock
        let timer = Task {
            do { try await clock.sleep(for: timeout) } catch { return }
            self.timeOut(id)
        }
        await withCheckedContinuation { waiters[id] = $0 }
        timer.cancel()
        if timedOut.remove(id) != nil && refreshes == seen { try await refreshFromDatabase() }
    }

    /// Wakes every waiting reader without a database read: a stream told to end looks at once.
    public func wakeReaders() {
        wakeAll()
    }

    /// Readers waiting now (for tests).
    public var waitingReaders: Int { waiters.count }
    /// The newest id released to readers (for tests).
    public var newest: Int { released }

    /// Forgets every held event, after the database deleted some (a device erased, retention):
    /// readers that are behind read the database again, and get what it still holds.
    public func invalidate() {
        floor = released
        held.removeAll()
    }

    // MARK: Private

    private func timeOut(_ id: Int) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        timedOut.insert(id)
        waiter.resume()
    }

    /// The index of the first held event with an id after `cursor` (ids ascend).
    private func firstIndex(after cursor: Int) -> Int {
        var low = held.startIndex, high = held.endIndex
        while low < high {
            let middle = (low + high) / 2
            if held[middle].id > cursor { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private func prepare() async throws {
        while !prepared {
            if refresh == nil {
                let store = self.store
                startRefresh(Task {
                    let newest = try await store.database.read { db in
                        try await db.raw("SELECT MAX(id) AS last FROM region_events").first()?.optionalInt("last")
                    } ?? 0
                    self.start(at: newest)
                })
            }
            try await awaitRefresh()
        }
    }

    private func start(at newest: Int) {
        onDatabaseRead()
        floor = max(floor, newest)
        released = max(released, newest)
        prepared = true
        waiting = waiting.filter { $0.key > released }
        releaseInOrder()
    }

    private func refreshFromDatabase() async throws {
        if refresh == nil {
            let after = released, publicationsBefore = publications, store = self.store
            startRefresh(Task {
                var events: [StoredEvent] = []
                var last = after
                while true {
                    let page = try await store.events(after: last, limit: EventPage.maximumLimit)
                    events += page
                    guard let newest = page.last, page.count == EventPage.maximumLimit else { break }
                    last = newest.id
                }
                self.merge(events, publishedBefore: publicationsBefore)
            })
        }
        try await awaitRefresh()
    }

    private func startRefresh(_ task: Task<Void, any Error>) {
        refreshNumber += 1
        refresh = (refreshNumber, task)
    }

    private func awaitRefresh() async throws {
        guard let (number, task) = refresh else { return }
        defer { if refresh?.number == number { refresh = nil } }
        try await task.value
    }

    /// Releases what the database holds after `released`, then every waiting event published
    /// before the read began: a hole the read did not fill was never committed.
    private func merge(_ events: [StoredEvent], publishedBefore publication: Int) {
        onDatabaseRead()
        refreshes += 1
        for event in events where event.id > released { append(event) }
        releaseWaiting(publishedBefore: publication)
        wakeAll()
    }

    /// Releases the waiting events published up to `publication`, in id order, past any hole.
    private func releaseWaiting(publishedBefore publication: Int) {
        waiting = waiting.filter { $0.key > released }
        for id in waiting.filter({ $0.value.publication <= publication }).keys.sorted() where id > released {
            if let entry = waiting.removeValue(forKey: id) { append(entry.event) }
        }
        releaseInOrder()
        wakeAll()
    }

    private func releaseInOrder() {
        var any = false
        while let next = waiting.removeValue(forKey: released + 1) {
            append(next.event)
            any = true
        }
        if any { wakeAll() }
    }

    private func append(_ event: StoredEvent) {
        held.append(event)
        released = event.id
        if held.count > capacity, let dropped = held.popFirst() { floor = dropped.id }
    }

    private func wakeAll() {
        let pending = waiters
        waiters.removeAll()
        for continuation in pending.values { continuation.resume() }
    }
}

extension EventFilter {
    /// The filter of ``Store/events(after:filter:limit:)``, on an event in memory.
    func matches(_ event: StoredEvent) -> Bool {
        if let siteID, event.siteID != siteID { return false }
        if let gatewayID, event.gatewayID != gatewayID { return false }
        guard uuid != nil || major != nil || minor != nil else { return true }
        guard let identity = event.rowIdentity else { return false }
        if let uuid, identity.uuid != uuid { return false }
        if let major, identity.major != major { return false }
        if let minor, identity.minor != minor { return false }
        return true
    }
}
