import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

extension ProximaServer {
    struct WebhookRequest: Decodable {
        var url: String
        var secret: String
        var siteID: Int?
    }

    func addEventRoutes(to router: Router<ProximaRequestContext>) {
        router.get("/v1/events") { request, context in
            try context.require(.read)
            let filter = try EventFilter(site: Self.query(request, "site"), region: Self.query(request, "region"))
            let after = try Self.startingID(request)
            let accept = request.headers[.accept] ?? ""
            if accept.contains("application/json") || Self.query(request, "format") == "json" {
                return try Self.json(try await self.store.events(after: after, filter: filter))
            }
            let follow = Self.query(request, "follow") != "false"
            return self.serverSentEvents(after: after, filter: filter, follow: follow)
        }
        router.ws("/v1/events/ws", shouldUpgrade: { request, context in
            try context.require(.read)
            _ = try EventFilter(site: Self.query(request, "site"), region: Self.query(request, "region"))
            _ = try Self.startingID(request)
            return .upgrade([:])
        }, onUpgrade: { _, outbound, context in
            let request = context.request
            guard let filter = try? EventFilter(site: Self.query(request, "site"), region: Self.query(request, "region")) else { return }
            var last = (try? Self.startingID(request)) ?? 0
            while !Task.isCancelled {
                let events = try await self.store.events(after: last, filter: filter)
                for event in events {
                    let data = try Self.encoder.encode(event)
                    try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
                    last = event.id
                }
                if events.isEmpty { await self.signal.wait(timeout: self.configuration.eventPollInterval) }
            }
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

    /// `?after=<id>` or the SSE `Last-Event-ID` header; 0 reads from the first event.
    static func startingID(_ request: Request) throws -> Int {
        guard let text = query(request, "after") ?? request.headers.first(where: { $0.name.canonicalName == "last-event-id" })?.value else { return 0 }
        guard let id = Int(text), id >= 0 else {
            throw APIError(.badRequest, field: "after", "expected an event id >= 0, found '\(text.prefix(40))'")
        }
        return id
    }

    /// `text/event-stream`: `id:`, `event: enter|exit`, `data: <json>`. Without `follow` it ends
    /// after the stored events; with it, it waits for new ones, from this or any other instance.
    func serverSentEvents(after: Int, filter: EventFilter, follow: Bool) -> Response {
        let body = ResponseBody { [store, signal, configuration] writer in
            var last = after
            var idleRounds = 0
            while !Task.isCancelled {
                let events = try await store.events(after: last, filter: filter)
                var text = ""
                for event in events {
                    let data = try Self.encoder.encode(event)
                    text += "id: \(event.id)\nevent: \(event.kind.rawValue)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
                    last = event.id
                }
                if !text.isEmpty {
                    try await writer.write(ByteBuffer(string: text))
                    idleRounds = 0
                } else if !follow {
                    break
                } else {
                    idleRounds += 1
                    // A comment line now and then keeps proxies from closing an idle stream.
                    if idleRounds % 60 == 0 { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) }
                    await signal.wait(timeout: configuration.eventPollInterval)
                }
                if events.count < 1000 && !follow { break }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }
}
