import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore

extension ProximaServer {
    struct WebhookRequest: Decodable {
        var url: String
        var secret: String
        var siteID: Int?

        private enum CodingKeys: String, CodingKey { case url, secret, siteID }

        /// `siteID` may be left out (every site), not sent as null (openapi.yaml).
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            url = try container.decode(String.self, forKey: .url)
            secret = try container.decode(String.self, forKey: .secret)
            siteID = try container.decodeOmittable(Int.self, forKey: .siteID)
        }
    }

    func addEventRoutes(to router: Router<ProximaRequestContext>) {
        router.get("/v1/events") { request, context in
            try context.require(.read)
            let filter = try EventFilter(site: Self.query(request, "site"), region: Self.query(request, "region"))
            let after = try Self.startingID(request)
            let limit = try EventPage.limit(Self.query(request, "limit"))
            let accept = request.headers[.accept] ?? ""
            let follow = try Self.booleanQuery(request, "follow", default: true)
            if try accept.contains("application/json") || Self.formatQuery(request, allowed: ["json"]) == "json" {
                let page = try await self.store.eventPage(after: after, filter: filter, limit: limit)
                var response = try Self.json(page.events)
                if let next = page.nextAfter {
                    response.headers[.link] = "<\(Self.nextPagePath(request, after: next, limit: limit))>; rel=\"next\""
                }
                return response
            }
            return self.serverSentEvents(after: after, filter: filter, follow: follow, lease: try self.openStream(context))
        }
        router.ws("/v1/events/ws", shouldUpgrade: { request, context in
            try self.checkEventSocket(request, context: context)
            // A plain GET reaches this route too; it gets 426 rather than an empty 200.
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                var error = APIError(.upgradeRequired, field: "Upgrade", "expected a WebSocket upgrade request (Upgrade: websocket), found none")
                error.headers[.upgrade] = "websocket"
                throw error
            }
            return .upgrade([:])
        }, onUpgrade: { inbound, outbound, context in
            let request = context.request
            guard let filter = try? EventFilter(site: Self.query(request, "site"), region: Self.query(request, "region")) else { return }
            // The gate checked the limit before the upgrade; another stream of the same token
            // may have opened since, and then this one closes at once ("try again later").
            guard let lease = try? self.openStream(context.requestContext) else {
                try await outbound.close(.unknown(1013), reason: "too many event streams (try again later)")
                return
            }
            let end = lease.end
            let feed = Task { [feed = self.eventFeed(filter, lease: lease), clock = self.clock] in
                let reason = try await feed.run(after: (try? Self.startingID(request)) ?? 0, follow: true) { events in
                    for event in events {
                        let text = String(decoding: try Self.encoder.encode(event), as: UTF8.self)
                        try await end.writing(now: clock()) { try await outbound.write(.text(text)) }
                    }
                }
                // 1008: the token may no longer read (RFC 6455, 7.4.1); 1013: try again later.
                if let reason {
                    try await outbound.close(reason == StreamEnd.slowReader ? .unknown(1013) : .policyViolation, reason: reason)
                }
            }
            // The client sends nothing the server needs, but the inbound stream ends when it
            // closes (or the server shuts down), and then the feed must stop instead of waiting
            // for an event to fail writing.
            defer { feed.cancel() }
            for try await _ in inbound {}
            withExtendedLifetime(lease) {}
        })
        router.get("/v1/webhooks") { [store] _, context in
            let principal = try context.require(.read)
            let webhooks = try await store.webhooks()
            return try Self.json(principal.role == .admin ? webhooks : webhooks.map(\.redacted))
        }
        router.post("/v1/webhooks") { [store] request, context in
            try context.require(.administer)
            let body = try await Self.decode(WebhookRequest.self, from: request)
            return try Self.json(try await store.addWebhook(url: body.url, secret: body.secret, siteID: body.siteID), status: .created)
        }
    }

    /// A lease on one more event stream for the caller's token (429 or 503 naming `streams`
    /// when the limits are reached); the stream ends when the token is revoked or expires.
    func openStream(_ context: ProximaRequestContext) throws -> EventStreamLease {
        let principal = try context.requireToken()
        let lease = try streams.open(tokenID: principal.tokenID, gatewayID: principal.gatewayID, expiresAt: principal.expiresAt)
        lease.end.attach(context.connection)
        return lease
    }

    /// `?after=<id>` or the SSE `Last-Event-ID` header; 0 reads from the first event.
    static func startingID(_ request: Request) throws -> Int {
        guard let text = query(request, "after") ?? request.headers.first(where: { $0.name.canonicalName == "last-event-id" })?.value else { return 0 }
        guard let id = Int(text), id >= 0 else {
            throw APIError(.badRequest, field: "after", "expected an event id >= 0, found '\(text.prefix(40))'")
        }
        return id
    }

    /// The same request for the page after `after`, keeping its filters: the `Link: rel="next"` target.
    static func nextPagePath(_ request: Request, after: Int, limit: Int) -> String {
        var components = URLComponents()
        components.path = request.uri.path
        components.queryItems = ["site", "region", "format"].compactMap { name in query(request, name).map { URLQueryItem(name: name, value: $0) } }
            + [URLQueryItem(name: "after", value: String(after)), URLQueryItem(name: "limit", value: String(limit))]
        return components.string ?? request.uri.path
    }

    func eventFeed(_ filter: EventFilter, lease: EventStreamLease) -> EventFeed {
        EventFeed(store: store, ring: events, filter: filter, pollInterval: configuration.eventPollInterval,
                  onDatabaseRead: { [metrics] in metrics.eventDatabaseReads.increment() }, end: lease.end, now: clock,
                  catchUp: catchUp, tokenID: lease.tokenID)
    }

    /// `text/event-stream`: `id:`, `event: enter|exit`, `data: <json>`. Without `follow` it ends
    /// after the stored events; with it, it waits for new ones, from this or any other instance.
    /// A stream told to end (``StreamEnd``) closes with `event: end` and why.
    func serverSentEvents(after: Int, filter: EventFilter, follow: Bool, lease: EventStreamLease) -> Response {
        let end = lease.end
        let feed = eventFeed(filter, lease: lease)
        let keepAliveInterval = configuration.eventKeepAlive
        let clock = self.clock
        let body = ResponseBody { writer in
            defer { withExtendedLifetime(lease) {} }
            var keepAlive = StreamKeepAlive(interval: keepAliveInterval)
            let reason = try await feed.run(after: after, follow: follow, deliver: { events in
                var text = ""
                for event in events {
                    let data = try Self.encoder.encode(event)
                    text += "id: \(event.id)\nevent: \(event.kindName)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
                }
                try await end.writing(now: clock()) { try await writer.write(ByteBuffer(string: text)) }
                keepAlive.wrote()
            }, idle: {
                if keepAlive.isDue() { try await end.writing(now: clock()) { try await writer.write(ByteBuffer(string: StreamKeepAlive.comment)) } }
            })
            if let reason { try await writer.write(ByteBuffer(string: Self.endEvent(reason))) }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }
}

extension ProximaServer {
    /// The last event of a stream told to end: `event: end`, `data: {"reason": …}`.
    static func endEvent(_ reason: String) -> String {
        let data = (try? encoder.encode(["reason": reason])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "event: end\ndata: \(data)\n\n"
    }
}

extension HTTPField.Name {
    /// RFC 8288 web linking; the event list names its next page with `rel="next"`.
    static var link: Self { Self("Link")! }
}
