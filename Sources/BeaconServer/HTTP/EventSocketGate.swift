import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

// hummingbird-websocket answers every refused upgrade with a bare 400, so a client without a
// token could not tell "log in" from "malformed request". The gate below asks the event
// socket's own checks (token, role, parameters) before the upgrade is attempted and answers a
// refusal with the API's status and JSON error body, as every other route does.

extension ProximaServer {
    /// The event socket's checks, shared by the router's upgrade decision and the gate.
    static func checkEventSocket(_ request: Request, context: ProximaRequestContext) throws {
        try context.require(.read)
        _ = try EventFilter(site: query(request, "site"), region: query(request, "region"))
        _ = try startingID(request)
    }

    /// Why an upgrade request would be refused, with the router's authentication; nil to go on.
    func eventSocketRefusal(_ request: Request, channel: any Channel, logger: Logger) async -> APIError? {
        let context = ProximaRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        do {
            _ = try await AuthenticationMiddleware(store: store, cache: tokenCache).handle(request, context: context) { request, context in
                try Self.checkEventSocket(request, context: context)
                return Response(status: .ok)
            }
            return nil
        } catch {
            return APIError.from(error) ?? APIError(.internalServerError, field: "request", "the upgrade could not be checked: \(error)")
        }
    }

    /// HTTP/1 with WebSocket upgrade, where a refused upgrade of the event socket gets the API's
    /// answer (401, 403 or 400 naming the field) instead of hummingbird-websocket's bare 400.
    func eventSocketServer(webSocketRouter: Router<ProximaRequestContext>,
                           configuration: HTTP1WebSocketUpgradeChannel.Configuration = .init()) -> HTTPServerBuilder {
        let webSocketResponder = webSocketRouter.buildResponder()
        return HTTPServerBuilder { [self] responder in
            EventSocketGatedChannel(
                upgradeChannel: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder,
                                                             configuration: configuration),
                refusal: { request, channel, logger in await self.eventSocketRefusal(request, channel: channel, logger: logger) })
        }
    }
}

/// hummingbird-websocket's upgrade channel with ``EventSocketGate`` placed between the HTTP
/// request decoder and the upgrade handler.
struct EventSocketGatedChannel: ServerChildChannel {
    typealias Refusal = @Sendable (Request, any Channel, Logger) async -> APIError?
    let upgradeChannel: HTTP1WebSocketUpgradeChannel
    let refusal: Refusal

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        upgradeChannel.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(EventSocketGate(refusal: refusal, logger: logger), position: .after(decoder))
            return value
        }
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await upgradeChannel.handle(value: value, logger: logger)
    }
}

/// Looks at the connection's first request. A WebSocket upgrade is held until the event
/// socket's checks ran: refused, it is answered and the connection closed; admitted, it goes on
/// to the upgrade. Either way the gate then leaves the pipeline (upgrade handling, like NIO's,
/// concerns only the first request).
final class EventSocketGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State { case first, checking, refused }
    private var state = State.first
    private var held: [HTTPServerRequestPart] = []
    private let refusal: EventSocketGatedChannel.Refusal
    private let logger: Logger

    init(refusal: @escaping EventSocketGatedChannel.Refusal, logger: Logger) {
        self.refusal = refusal
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch state {
        case .refused:
            return
        case .checking:
            held.append(part)
        case .first:
            guard case .head(let head) = part, Self.asksForWebSocket(head), let request = Self.request(head) else {
                context.fireChannelRead(data)
                context.pipeline.syncOperations.removeHandler(self, promise: nil)
                return
            }
            state = .checking
            held.append(part)
            let channel = context.channel, logger = self.logger, refusal = self.refusal
            context.eventLoop.makeFutureWithTask { await refusal(request, channel, logger) }
                .assumeIsolated().whenSuccess { refused in self.decided(refused, context: context) }
        }
    }

    private func decided(_ refused: APIError?, context: ChannelHandlerContext) {
        guard let refused else {
            for part in held { context.fireChannelRead(wrapInboundOut(part)) }
            held = []
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
            return
        }
        state = .refused
        held = []
        let body = (try? JSONEncoder().encode(APIError.Body(error: .init(field: refused.field, message: refused.message)))) ?? Data()
        var headers = HTTPHeaders()
        for field in refused.headers { headers.add(name: field.name.rawName, value: field.value) }
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        headers.replaceOrAdd(name: "Connection", value: "close")
        let status = HTTPResponseStatus(statusCode: Int(refused.status.code), reasonPhrase: refused.status.reasonPhrase)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
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
