import NIOCore

/// What a connection tells the client: a packet, a fault that ended it, or its end.
enum MQTTConnectionEvent: Sendable {
    case packet(MQTTPacket)
    case failure(any Error)
    case closed
}

/// Cuts the inbound bytes into packets. Bytes of a partial packet are kept (at most one
/// packet's worth, bounded by the decoder's limit); a malformed packet closes the connection,
/// because nothing after it can be trusted to be aligned.
///
/// It also keeps the connection alive once the broker accepted it: a PINGREQ twice per
/// keep-alive period, and the connection closed when the pings of a whole period went
/// unanswered (§3.1.2.10), so that the client reconnects. The pings run on the channel's event
/// loop rather than as a task of the client: a process whose cooperative threads are busy
/// with other work (a gateway's positioning, a loaded test host) still pings on time.
final class MQTTChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let decoder: MQTTPacketDecoder
    private let events: AsyncStream<MQTTConnectionEvent>.Continuation
    private var pending: ByteBuffer?
    /// Seconds; 0 turns pinging off.
    private let keepAlive: UInt16
    private var nextPing: Scheduled<Void>?
    /// PINGREQs sent since the last PINGRESP.
    private var unansweredPings = 0

    init(decoder: MQTTPacketDecoder, keepAlive: UInt16, events: AsyncStream<MQTTConnectionEvent>.Continuation) {
        self.decoder = decoder
        self.keepAlive = keepAlive
        self.events = events
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if pending == nil {
            pending = incoming
        } else {
            pending!.writeBuffer(&incoming)
        }
        do {
            while var buffer = pending, buffer.readableBytes > 0 {
                let decoded = try buffer.withUnsafeReadableBytes { bytes in try decoder.decode(bytes) }
                guard let (packet, length) = decoded else { break }
                buffer.moveReaderIndex(forwardBy: length)
                pending = buffer.readableBytes > 0 ? buffer : nil
                noteKeepAlive(packet, context: context)
                events.yield(.packet(packet))
            }
            if var rest = pending, rest.readerIndex > 0 {
                rest.discardReadBytes()
                pending = rest
            }
        } catch {
            events.yield(.failure(error))
            pending = nil
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        events.yield(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        nextPing?.cancel()
        nextPing = nil
        events.yield(.closed)
        events.finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        nextPing?.cancel()
        nextPing = nil
    }

    // MARK: Keep-alive

    private func noteKeepAlive(_ packet: MQTTPacket, context: ChannelHandlerContext) {
        switch packet {
        case .connAck(_, .accepted) where keepAlive > 0 && nextPing == nil:
            schedulePing(context: context)
        case .pingResp:
            unansweredPings = 0
        default:
            break
        }
    }

    private func schedulePing(context: ChannelHandlerContext) {
        let interval = TimeAmount.milliseconds(Int64(keepAlive) * 500)
        nextPing = context.eventLoop.assumeIsolated().scheduleTask(in: interval) { [self] in
            ping(context: context)
        }
    }

    private func ping(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        if unansweredPings >= 2 {
            events.yield(.failure(MQTTClientError.timedOut("PINGRESP within the \(keepAlive) s keep-alive")))
            context.close(promise: nil)
            return
        }
        unansweredPings += 1
        if let bytes = try? MQTTPacket.pingReq.encoded() {
            context.writeAndFlush(NIOAny(ByteBuffer(bytes: bytes)), promise: nil)
        }
        schedulePing(context: context)
    }
}
