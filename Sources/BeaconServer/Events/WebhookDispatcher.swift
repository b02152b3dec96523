import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import SQLKit

public struct Webhook: Sendable, Hashable, Codable {
    public var id: Int
    public var url: String
    public var siteID: Int?
}

extension Store {
    /// Registers a URL to receive enter and exit events (of one site, or all); the secret signs them.
    public func addWebhook(url: String, secret: String, siteID: Int?) async throws -> Webhook {
        try WebhookURL.check(url)
        guard secret.utf8.count >= 16 else {
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

/// Delivers enter and exit events to webhooks: a JSON POST signed with HMAC-SHA256 of the
/// body (`X-Proxima-Signature: sha256=<hex>`), retried with growing pauses when the receiver
/// fails or cannot be reached.
public final class WebhookDispatcher: Sendable {
    let store: Store
    let client: HTTPClient
    let attempts: Int
    let firstPause: Duration
    let logger: Logger

    public init(store: Store, client: HTTPClient, attempts: Int = 5, firstPause: Duration = .milliseconds(500), logger: Logger) {
        self.store = store
        self.client = client
        self.attempts = attempts
        self.firstPause = firstPause
        self.logger = logger
    }

    public static func signature(body: [UInt8], secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// Sends each event to every matching webhook; returns when all deliveries finished or gave up.
    public func deliver(_ events: [StoredEvent]) async {
        guard !events.isEmpty, let targets = try? await store.webhookTargets(), !targets.isEmpty else { return }
        await withTaskGroup(of: Void.self) { group in
            for (webhook, secret) in targets {
                let matching = events.filter { webhook.siteID == nil || $0.siteID == webhook.siteID }
                guard !matching.isEmpty else { continue }
                group.addTask { await self.send(matching, to: webhook, secret: secret) }
            }
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
                try? await Task.sleep(for: pause)
                pause *= 2
            }
        }
        logger.error("webhook gave up", metadata: ["webhook": "\(webhook.id)", "events": "\(events.count)"])
    }
}
