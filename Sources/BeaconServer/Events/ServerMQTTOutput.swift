import BeaconMQTT
import Logging
import ServiceLifecycle

/// `proxima serve --mqtt`: the events this instance stores, published in the order they were
/// stored (``ServerMQTTMessages`` says where). Ingestion hands batches over without waiting
/// (`enqueue`); a bounded buffer sits between them, and a broker that is away costs memory only
/// up to the client's own queue (``MQTTClient/Configuration/queueCapacity``). As a service it
/// announces `online`, and on shutdown publishes `offline` and disconnects cleanly; the broker
/// publishes the same `offline` (the will) if the server dies.
public final class ServerMQTTOutput: Service, Sendable {
    public let client: MQTTClient
    private let initialMessages: ServerMQTTMessages
    private let batches: AsyncStream<[StoredEvent]>
    private let continuation: AsyncStream<[StoredEvent]>.Continuation
    private let logger: Logger

    /// Batches waiting for the publisher; beyond this the oldest waiting batch is dropped (and
    /// logged) rather than memory growing while the process lives.
    public static let bufferedBatches = 10_000

    public init(configuration: MQTTClient.Configuration, options: ServerMQTTMessages.Options, logger: Logger) {
        let messages = ServerMQTTMessages(options: options)
        var configuration = configuration
        configuration.will = messages.will
        initialMessages = messages
        client = MQTTClient(configuration: configuration) { line in logger.warning("MQTT: \(line)") }
        (batches, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferedBatches))
        self.logger = logger
    }

    /// Hands a stored batch to the publisher, in order, without waiting for the broker.
    public func enqueue(_ events: [StoredEvent]) {
        guard !events.isEmpty else { return }
        if case .dropped = continuation.yield(events) {
            logger.warning("MQTT: a batch of events was dropped; the publisher is \(Self.bufferedBatches) batches behind")
        }
    }

    public func run() async throws {
        await client.start()
        try? await client.publish(initialMessages.online)
        await cancelWhenGracefulShutdown {
            var messages = self.initialMessages
            var warnedFull = false
            for await batch in self.batches {
                for event in batch {
                    for message in messages.messages(for: event) {
                        do { try await self.client.publish(message) } catch {
                            if !warnedFull { self.logger.warning("MQTT: \(error) (further drops are counted in the client's statistics)") }
                            warnedFull = true
                        }
                    }
                }
            }
        }
        continuation.finish()
        try? await client.publish(initialMessages.will)
        await client.disconnect(flushTimeout: .seconds(5))
        let statistics = await client.statistics
        if statistics.dropped > 0 { logger.warning("MQTT: \(statistics.dropped) messages dropped (queue full)") }
    }
}
