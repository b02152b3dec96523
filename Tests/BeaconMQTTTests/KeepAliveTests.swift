import BeaconMQTT
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// The client's side of keep-alive against a broker that accepts the connection and then never
/// answers a PINGREQ: after a whole keep-alive period of unanswered pings the client must close
/// the connection and connect again (MQTT 3.1.1 §3.1.2.10), instead of trusting a dead link.
@Suite("MQTT keep-alive without answers")
struct KeepAliveTests {
    /// Counts connections and PINGREQs; answers CONNECT with an accepting CONNACK and nothing else.
    final class SilentBroker: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        struct Counts { var connections = 0; var pings = 0 }
        let counts = NIOLockedValueBox(Counts())

        func channelActive(context: ChannelHandlerContext) {
            counts.withLockedValue { $0.connections += 1 }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = Array(buffer: unwrapInboundIn(data))
            // Packets arrive whole here (a few bytes each on loopback); only their type matters.
            if bytes.first == 0x10 {
                context.writeAndFlush(NIOAny(ByteBuffer(bytes: [0x20, 0x02, 0x00, 0x00])), promise: nil)
            }
            let pings = stride(from: 0, to: bytes.count - 1, by: 1).filter { bytes[$0] == 0xC0 && bytes[$0 + 1] == 0x00 }.count
            counts.withLockedValue { $0.pings += pings }
        }
    }

    @Test("unanswered pings close the connection after one keep-alive period, and the client reconnects", .timeLimit(.minutes(1)))
    func unansweredPingsReconnect() async throws {
        let broker = SilentBroker()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(broker) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        var configuration = MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: port), clientIdentifier: "unanswered")
        configuration.keepAlive = 1
        configuration.backoff = MQTTBackoff(initial: .milliseconds(50), maximum: .milliseconds(200))
        let client = MQTTClient(configuration: configuration)
        var accepted = client.connections.makeAsyncIterator()
        await client.start()
        // Awaits the client's own announcements: the first connection, then the reconnect that
        // only the keep-alive's verdict can cause (the broker never closes the connection).
        let first = await accepted.next()
        let second = await accepted.next()
        #expect(first?.number == 1)
        #expect(second?.number == 2 && second?.isReconnect == true, "no reconnect was announced: \(String(describing: second))")
        let statistics = await client.statistics
        let counts = broker.counts.withLockedValue { $0 }
        #expect(statistics.connections >= 2, "the client kept a connection whose pings went unanswered: \(statistics)")
        #expect(counts.connections >= 2)
        // Two pings go unanswered before the third would be due: the connection is given up only
        // after a whole keep-alive period of silence, not at the first late answer.
        #expect(counts.pings >= 2, "\(counts)")
        #expect(statistics.pingsAnswered == 0)
        let lastError = await client.lastError.map { "\($0)" } ?? "none"
        #expect(lastError.contains("PINGRESP"), "\(lastError)")
        await client.disconnect(flushTimeout: .milliseconds(100))
        try await server.close()
    }
}
