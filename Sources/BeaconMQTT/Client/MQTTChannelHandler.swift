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
final class MQTTChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let decoder: MQTTPacketDecoder
    private let events: AsyncStream<MQTTConnectionEvent>.Continuation
    private var pending: ByteBuffer?

    init(decoder: MQTTPacketDecoder, events: AsyncStream<MQTTConnectionEvent>.Continuation) {
        self.decoder = decoder
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
        events.yield(.closed)
        events.finish()
        context.fireChannelInactive()
    }
}
