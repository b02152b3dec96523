import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

// hummingbird-websocket answers every refused upgrade with a bare 400, so a client without a
// token could not tell "log in" from "malformed request". The gate below runs the event
// socket's own checks (token, role, parameters) before the upgrade is attempted; a request they
// refuse goes on as a plain HTTP request, so the router answers it as every other route: 401,
// 403, or 400 naming the field.

extension ProximaServer {
    /// The event socket's checks, shared by the router's upgrade decision and the gate.
    func checkEventSocket(_ request: Request, context: ProximaRequestContext) throws {
        let principal = try context.require(.read)
        _ = try EventFilter(site: Self.query(request, "site"), region: Self.query(request, "region"))
        _ = try Self.startingID(request)
        try streams.check(tokenID: principal.tokenID)
    }

    /// Whether the event socket's checks, with the router's authentication, admit the request.
    func admitsEventSocket(_ request: Request, channel: any Channel, logger: Logger) async -> Bool {
        let context = ProximaRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        do {
            _ = try await AuthenticationMiddleware(store: store, cache: tokenCache, throttle: authThrottle).handle(request, context: context) { request, context in
                try self.checkEventSocket(request, context: context)
                return Response(status: .ok)
            }
            return true
        } catch {
            return false
        }
    }
}

/// Asks whether the event socket's own checks admit a request.
typealias EventSocketCheck = @Sendable (Request, any Channel, Logger) async -> Bool

/// Looks at the connection's first request. A WebSocket upgrade is held until the event
/// socket's checks ran: admitted, it goes on to the upgrade; refused, it goes on without its
/// `Upgrade` header, as a plain request the router refuses with the API's status and body.
/// Either way the gate then leaves the pipeline (upgrades, like NIO's handler, concern only the
/// first request).
final class EventSocketGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private var checking = false
    private var held: [HTTPServerRequestPart] = []
    private let admits: EventSocketCheck
    private let logger: Logger

    init(admits: @escaping EventSocketCheck, logger: Logger) {
        self.admits = admits
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if checking {
            held.append(part)
            return
        }
        guard case .head(let head) = part, Self.asksForWebSocket(head), let request = Self.request(head) else {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
            return
        }
        checking = true
        held.append(part)
        let channel = context.channel, logger = self.logger, admits = self.admits
        context.eventLoop.makeFutureWithTask { await admits(request, channel, logger) }
            .assumeIsolated().whenSuccess { admitted in self.release(admitted: admitted, context: context) }
    }

    private func release(admitted: Bool, context: ChannelHandlerContext) {
        for part in held {
            if !admitted, case .head(var head) = part {
                head.headers.remove(name: "Upgrade")
                head.headers.replaceOrAdd(name: "Connection", value: "close")
                context.fireChannelRead(wrapInboundOut(.head(head)))
            } else {
                context.fireChannelRead(wrapInboundOut(part))
            }
        }
        held = []
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }

    static func asksForWebSocket(_ head: HTTPRequestHead) -> Bool {
        head.headers["Upgrade"].contains { $0.lowercased().contains("websocket") }
    }

    /// The request as the router sees it, without a body (an upgrade request has none).
    static func request(_ head: HTTPRequestHead) -> Request? {
        var fields = HTTPFields()
        for (name, value) in head.headers {
            guard let name = HTTPField.Name(name) else { return nil }
            fields.append(HTTPField(name: name, value: value))
        }
        let request = HTTPRequest(method: .init(head.method.rawValue) ?? .get, scheme: nil, authority: head.headers["Host"].first,
                                  path: head.uri, headerFields: fields)
        return Request(head: request, body: RequestBody(buffer: ByteBuffer()))
    }
}
