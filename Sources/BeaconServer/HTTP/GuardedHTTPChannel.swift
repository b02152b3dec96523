import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel with WebSocket upgrade, plus a `FirstRequestGuard` right after
/// the request decoder, so the connection limits hold from the first byte on, and then the
/// ``EventSocketGate``, so a refused event-socket upgrade gets the API's answer.
struct GuardedHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let upgradeChannel: HTTP1WebSocketUpgradeChannel
    let requestHeadTimeout: TimeAmount
    let requestTimeout: TimeAmount
    let admitsEventSocket: EventSocketCheck

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeout = requestHeadTimeout
        let bodyTimeout = requestTimeout
        let admits = admitsEventSocket
        return upgradeChannel.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(RequestBodyDeadline(timeout: bodyTimeout), position: .after(decoder))
            try operations.addHandler(EventSocketGate(admits: admits, logger: logger), position: .after(decoder))
            try operations.addHandler(FirstRequestGuard(headTimeout: timeout), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        var upgradeLogger = logger
        upgradeLogger.handler = RoutineConnectionEndFilter(base: logger.handler)
        await upgradeChannel.handle(value: value, logger: upgradeLogger)
    }
}

extension ProximaServer {
    /// HTTP/1 with WebSocket upgrade, with the idle timeout, head timeout and header size
    /// limit of the configuration (docs/server.md, "Connections").
    func guardedServer() -> HTTPServerBuilder {
        let webSocketResponder = makeRouter().buildResponder()
        let limits = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: configuration.maxHeaderBytes, maxHeaderListSize: configuration.maxHeaderBytes, maxHeaderFieldCount: 100)
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: HTTP1Channel.Configuration(idleTimeout: TimeAmount(configuration.idleTimeout), httpDecoderConfiguration: limits))
        let headTimeout = TimeAmount(configuration.requestHeadTimeout)
        let tls = configuration.tls
        return HTTPServerBuilder { [self] responder in
            try ServerTLS.wrap(GuardedHTTPChannel(
                upgradeChannel: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder,
                                                             configuration: channelConfiguration),
                requestHeadTimeout: headTimeout,
                requestTimeout: TimeAmount(configuration.requestTimeout),
                admitsEventSocket: { request, channel, logger in await self.admitsEventSocket(request, channel: channel, logger: logger) }),
                tls: tls)
        }
    }
}
