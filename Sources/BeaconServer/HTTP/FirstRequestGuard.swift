import NIOCore
import NIOHTTP1

/// Watches a new connection until its first request head is complete. Hummingbird's idle
/// timeout and its answer to malformed requests only start once that head has been read (with
/// the WebSocket upgrade pipeline this server uses), so before it a client that sends nothing,
/// half a request line, garbage, `Content-Length: -1` or an oversized header was neither
/// answered nor closed. This handler answers 408 when the head does not arrive in time, 400 to
/// a malformed request and 431 to an oversized head, closes the connection, and removes itself
/// once a head has arrived.
final class FirstRequestGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let headTimeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var refused = false

    init(headTimeout: TimeAmount) {
        self.headTimeout = headTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startDeadline(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startDeadline(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let part = unwrapInboundIn(data)
        context.fireChannelRead(data)
        if case .head = part {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        refuse(context, status: parserError == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest)
    }

    private func startDeadline(_ context: ChannelHandlerContext) {
        guard deadline == nil, !refused else { return }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: headTimeout) {
            bound.value.handler.refuse(bound.value.context, status: .requestTimeout)
        }
    }

    private func refuse(_ context: ChannelHandlerContext, status: HTTPResponseStatus) {
        guard !refused else { return }
        refused = true
        deadline?.cancel()
        deadline = nil
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: ["Connection": "close", "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        let channel = context.channel
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }
}
