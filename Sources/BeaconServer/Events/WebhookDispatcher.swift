import AsyncHTTPClient
import Crypto
import DequeModule
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import SQLKit
import Synchronization

public struct Webhook: Sendable, Hashable, Codable {
    public var id: Int
    public var url: String
    public var siteID: Int?
}

extension Store {
    /// Registers a URL to receive enter and exit events (of one site, or all); the secret signs them.
    public func addWebhook(url: String, secret: String, siteID: Int?) async throws -> Webhook {
        try WebhookURL.check(url)
        // Counted as JSON Schema's minLength counts (code points), so the document and the server agree.
        guard secret.unicodeScalars.count >= 16 else {
            throw RegistryError(.invalid, field: "secret", "expected a secret of at least 16 characters to sign deliveries")
        }
        return try await database.transaction { db in
            if let siteID { _ = try await Self.site(id: siteID, db: db) }
            guard let row = try await db.raw("""
                INSERT INTO webhooks (url, secret, site_id, created_at)
                VALUES (\(bind: url), \(bind: secret), \(bind: siteID), \(bind: Date().timeIntervalSince1970)) RETURNING id
                """).first() else {
                throw RegistryError(.invalid, field: "webhook", "the database returned no id for the new webhook")
            }
            return Webhook(id: try row.int("id"), url: url, siteID: siteID)
        }
    }

    public func webhooks() async throws -> [Webhook] {
        try await database.read { db in
            try await db.raw("SELECT id, url, site_id FROM webhooks ORDER BY id").all().map {
                Webhook(id: try $0.int("id"), url: try $0.string("url"), siteID: try $0.optionalInt("site_id"))
            }
        }
    }

    func webhookTargets() async throws -> [(Webhook, String)] {
        try await database.read { db in
            try await db.raw("SELECT id, url, site_id, secret FROM webhooks ORDER BY id").all().map {
                (Webhook(id: try $0.int("id"), url: try $0.string("url"), siteID: try $0.optionalInt("site_id")), try $0.string("secret"))
            }
        }
    }
}

/// Delivers events to webhooks as a service of its own: a JSON POST signed with HMAC-SHA256 of
/// the body (`X-Proxima-Signature: sha256=<hex>`), retried with growing pauses when the
/// receiver fails or cannot be reached.
///
/// Bounded whatever the receivers do: publishing only appends to a capped intake; each webhook
/// has a capped queue and at most one delivery in flight, sent by one worker that exists only
/// while its queue holds events. A receiver that never answers costs one connection and its
/// queue; past the cap the oldest events are dropped and counted (`onDrop`, in `/metrics`). The
/// events stay in the database, readable from `/v1/events`.
public final class WebhookDispatcher: Service, Sendable {
    public struct Limits: Sendable {
        /// Events waiting for the dispatcher to sort them by webhook.
        public var intake = 10_000
        /// Events waiting per webhook while its receiver is slow or down.
        public var queuedPerWebhook = 2_000
        /// Events in one POST.
        public var eventsPerDelivery = 100

        public init() {}
    }

    let store: Store
    let client: HTTPClient
    let attempts: Int
    let firstPause: Duration
    let limits: Limits
    let clock: any Clock<Duration>
    let logger: Logger
    let onDrop: @Sendable (Int) -> Void
    private let state = Mutex(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    private struct State {
        var intake = Deque<StoredEvent>()
        var queues: [Int: Deque<StoredEvent>] = [:]
        var working: Set<Int> = []
        var dropped = 0
    }

    public init(store: Store, client: HTTPClient, attempts: Int = 5, firstPause: Duration = .milliseconds(500),
                limits: Limits = Limits(), clock: any Clock<Duration> = ContinuousClock(), logger: Logger,
                onDrop: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.store = store
        self.client = client
        self.attempts = attempts
        self.firstPause = firstPause
        self.limits = limits
        self.clock = clock
        self.logger = logger
        self.onDrop = onDrop
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    public static func signature(body: [UInt8], secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// Hands events to the dispatcher without waiting; the oldest are dropped past the intake's cap.
    public func enqueue(_ events: [StoredEvent]) {
        guard !events.isEmpty else { return }
        let dropped = state.withLock { state in
            state.intake.append(contentsOf: events)
            let excess = max(0, state.intake.count - limits.intake)
            state.intake.removeFirst(excess)
            state.dropped += excess
            return excess
        }
        if dropped > 0 { onDrop(dropped) }
        wake.yield()
    }

    /// Events dropped so far (intake and webhook queues).
    public var droppedEvents: Int { state.withLock { $0.dropped } }

    /// Events waiting, in the intake and in every webhook's queue.
    public var queuedEvents: Int { state.withLock { state in state.intake.count + state.queues.values.reduce(0) { $0 + $1.count } } }

    /// Sorts the intake into the webhooks' queues whenever events arrive, and runs one worker per
    /// webhook with events waiting. Ends with the service group (or the task), with its workers.
    public func run() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await _ in self.wakeups {
                    for (webhook, secret) in await self.sortIntake() {
                        group.addTask { await self.work(for: webhook, secret: secret) }
                    }
                }
            }
        }
    }

    /// Moves the intake into the matching webhooks' queues; returns the webhooks that need a worker.
    private func sortIntake() async -> [(Webhook, String)] {
        let events = state.withLock { state in
            defer { state.intake.removeAll() }
            return Array(state.intake)
        }
        guard !events.isEmpty else { return [] }
        let targets: [(Webhook, String)]
        do {
            targets = try await store.webhookTargets()
        } catch {
            logger.error("webhook targets unreadable; events not delivered", metadata: ["events": "\(events.count)", "error": "\(error)"])
            return []
        }
        var started: [(Webhook, String)] = []
        var dropped = 0
        state.withLock { state in
            for (webhook, secret) in targets {
                let matching = events.filter { webhook.siteID == nil || $0.siteID == webhook.siteID }
                guard !matching.isEmpty else { continue }
                state.queues[webhook.id, default: []].append(contentsOf: matching)
                let excess = max(0, state.queues[webhook.id, default: []].count - limits.queuedPerWebhook)
                state.queues[webhook.id]?.removeFirst(excess)
                dropped += excess
                if state.working.insert(webhook.id).inserted { started.append((webhook, secret)) }
            }
            state.dropped += dropped
        }
        if dropped > 0 {
            onDrop(dropped)
            logger.warning("webhook queue full; oldest events dropped", metadata: ["dropped": "\(dropped)"])
        }
        return started
    }

    /// Sends the webhook's queue one delivery at a time until it is empty, then ends.
    private func work(for webhook: Webhook, secret: String) async {
        while !Task.isCancelled {
            let next = state.withLock { state -> [StoredEvent]? in
                guard let queue = state.queues[webhook.id], !queue.isEmpty else {
                    state.queues.removeValue(forKey: webhook.id)
                    state.working.remove(webhook.id)
                    return nil
                }
                let count = min(limits.eventsPerDelivery, queue.count)
                defer { state.queues[webhook.id]?.removeFirst(count) }
                return Array(queue.prefix(count))
            }
            guard let next else { return }
            await send(next, to: webhook, secret: secret)
        }
        state.withLock { state in
            state.queues.removeValue(forKey: webhook.id)
            state.working.remove(webhook.id)
        }
    }

    struct Delivery: Encodable {
        var webhookID: Int
        var events: [StoredEvent]
    }

    func send(_ events: [StoredEvent], to webhook: Webhook, secret: String) async {
        guard let body = try? JSONEncoder().encode(Delivery(webhookID: webhook.id, events: events)) else { return }
        let bytes = [UInt8](body)
        var pause = firstPause
        for attempt in 1...attempts {
            var request = HTTPClientRequest(url: webhook.url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "X-Proxima-Signature", value: Self.signature(body: bytes, secret: secret))
            request.headers.add(name: "X-Proxima-Attempt", value: String(attempt))
            request.body = .bytes(ByteBuffer(bytes: bytes))
            do {
                let response = try await client.execute(request, timeout: .seconds(10))
                if (200..<300).contains(response.status.code) { return }
                logger.warning("webhook refused", metadata: ["webhook": "\(webhook.id)", "status": "\(response.status.code)", "attempt": "\(attempt)"])
            } catch {
                logger.warning("webhook unreachable", metadata: ["webhook": "\(webhook.id)", "error": "\(error)", "attempt": "\(attempt)"])
            }
            if attempt < attempts {
                do { try await clock.sleep(for: pause) } catch { return }
                pause *= 2
            }
        }
        logger.error("webhook gave up", metadata: ["webhook": "\(webhook.id)", "events": "\(events.count)"])
    }
}
