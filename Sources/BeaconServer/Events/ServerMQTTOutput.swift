import BeaconMQTT
import Logging
import ServiceLifecycle

/// `proxima serve --mqtt`: the events this instance stores, published in the order they were
/// stored (``ServerMQTTMessages`` says where). Ingestion hands batches over without waiting
/// (`enqueue`); a bounded buffer sits between them, and a broker that is away costs memory only
/// up to the client's own queue (``MQTTClient/Configuration/queueCapacity``). As a service it
/// announces `online` after every connect (the client's birth message), publishes its discovery
/// configs and room states again after a reconnect and when Home Assistant announces itself,
/// and on shutdown publishes `offline` and disconnects cleanly; the broker publishes the same
/// `offline` (the will) if the server dies.
public final class ServerMQTTOutput: Service, Sendable {
    public let client: MQTTClient
    private let initialMessages: ServerMQTTMessages
    /// Stored batches, and the moments to publish the retained state again, in one order.
    private enum Input: Sendable {
        case batch([StoredEvent])
        case republish
    }

    private let inputs: AsyncStream<Input>
    private let continuation: AsyncStream<Input>.Continuation
    private let logger: Logger

    /// Batches waiting for the publisher; beyond this the oldest waiting batch is dropped (and
    /// logged) rather than memory growing while the process lives.
    public static let bufferedBatches = 10_000

    public init(configuration: MQTTClient.Configuration, options: ServerMQTTMessages.Options, logger: Logger) {
        let messages = ServerMQTTMessages(options: options)
        var configuration = configuration
        configuration.will = messages.will
        configuration.birth = messages.online
        initialMessages = messages
        client = MQTTClient(configuration: configuration) { line in logger.warning("MQTT: \(line)") }
        (inputs, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferedBatches))
        self.logger = logger
    }

    /// Hands a stored batch to the publisher, in order, without waiting for the broker.
    public func enqueue(_ events: [StoredEvent]) {
        guard !events.isEmpty else { return }
        if case .dropped = continuation.yield(.batch(events)) {
            logger.warning("MQTT: a batch of events was dropped; the publisher is \(Self.bufferedBatches) batches behind")
        }
    }

    public func run() async throws {
        await client.start()
        let watchers = startWatching()
        await cancelWhenGracefulShutdown {
            var messages = self.initialMessages
            var warnedFull = false
            for await input in self.inputs {
                let outgoing = switch input {
                case .batch(let batch): messages.messages(for: batch)
                case .republish: messages.republished()
                }
                for message in outgoing {
                    do { try await self.client.publish(message) } catch {
                        if !warnedFull { self.logger.warning("MQTT: \(error) (further drops are counted in the client's statistics)") }
                        warnedFull = true
                    }
                }
            }
        }
        for watcher in watchers { watcher.cancel() }
        continuation.finish()
        try? await client.publish(initialMessages.will)
        await client.disconnect(flushTimeout: .seconds(5))
        let statistics = await client.statistics
        if statistics.dropped > 0 { logger.warning("MQTT: \(statistics.dropped) messages dropped (queue full)") }
    }

    /// Logs each accepted connection and asks for the retained state again after a reconnect
    /// and when Home Assistant publishes `online` on its status topic.
    private func startWatching() -> [Task<Void, Never>] {
        let client = self.client
        let continuation = self.continuation
        let logger = self.logger
        var watchers = [Task {
            for await connection in client.connections {
                logger.info("\(connection.description)")
                if connection.isReconnect { continuation.yield(.republish) }
            }
        }]
        guard initialMessages.options.homeAssistantDiscovery else { return watchers }
        let statusTopic = initialMessages.homeAssistantStatusTopic
        watchers.append(Task {
            // Recorded at once and sent on every connect; the first SUBACK may time out while
            // the broker is away, which changes nothing.
            _ = try? await client.subscribe([(statusTopic, .atLeastOnce)], timeout: .seconds(1))
        })
        watchers.append(Task {
            for await message in client.messages where message.topic == statusTopic && message.text == "online" {
                continuation.yield(.republish)
            }
        })
        return watchers
    }
}
