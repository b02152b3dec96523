import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Why the client refused a call or a broker refused the client.
public enum MQTTClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The outbound queue is full of unacknowledged QoS 1 messages.
    case queueFull(topic: String)
    case refused(MQTTConnectReturnCode)
    case timedOut(String)
    case stopped
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .queueFull(let topic): "MQTT outbound queue is full; not queued: \(topic)"
        case .refused(let code): "the MQTT broker refused the connection: \(code)"
        case .timedOut(let what): "MQTT: timed out waiting for \(what)"
        case .stopped: "the MQTT client was stopped"
        case .protocolViolation(let what): "MQTT broker broke the protocol: \(what)"
        }
    }
}

/// A small MQTT 3.1.1 client: it keeps one connection to the broker, reconnects with
/// exponential backoff, pings within the keep-alive, publishes QoS 0 and 1 from a bounded
/// queue and sends unacknowledged QoS 1 messages again (DUP set) after a reconnect.
public actor MQTTClient {
    public struct Configuration: Sendable {
        public var broker: MQTTBrokerURL
        public var clientIdentifier: String
        /// False keeps the broker's session (subscriptions, queued QoS 1 messages) across reconnects.
        public var cleanSession = true
        public var keepAlive: UInt16 = 30
        public var will: MQTTMessage?
        /// Published first after every accepted connection, the first and each reconnect: the
        /// retained `online` that replaces the will the broker published while this client was
        /// away (or that a restarted broker lost).
        public var birth: MQTTMessage?
        public var queueCapacity = 10_000
        public var inFlightLimit = 32
        public var backoff = MQTTBackoff()
        public var connectTimeout: Duration = .seconds(10)
        public var maximumPacketSize = 1 << 20
        /// Received messages kept for a slow reader of ``MQTTClient/messages``; later ones are dropped.
        public var receiveBufferLimit = 10_000
        /// A PEM file of certificate authorities to trust for mqtts:// instead of the system's.
        public var trustedCertificatesFile: String?

        public init(broker: MQTTBrokerURL, clientIdentifier: String) {
            self.broker = broker
            self.clientIdentifier = clientIdentifier
        }
    }

    /// One accepted connection, as ``MQTTClient/connections`` announces it.
    public struct Connection: Sendable, Hashable, CustomStringConvertible {
        /// 1 for the first accepted connection, 2 for the first reconnect, and so on.
        public var number: Int
        public var broker: MQTTBrokerURL
        public var sessionPresent: Bool

        public var isReconnect: Bool { number > 1 }
        public var description: String {
            "MQTT \(isReconnect ? "reconnected" : "connected") to \(broker)\(sessionPresent ? " (session kept)" : "")"
        }
    }

    public struct Statistics: Sendable, Hashable {
        public var connections = 0
        public var published = 0
        public var acknowledged = 0
        public var resent = 0
        public var dropped = 0
        public var received = 0
        public var pingsAnswered = 0
    }

    public let configuration: Configuration
    /// Messages the broker delivers for ``subscribe(_:)``.
    public nonisolated let messages: AsyncStream<MQTTMessage>
    private let messageContinuation: AsyncStream<MQTTMessage>.Continuation
    /// Every accepted connection, after its birth message was queued: the moment to publish
    /// again what a restarted broker may have lost (retained discovery configs and states).
    /// Only the newest waits for a slow reader; one announcement covers all before it.
    public nonisolated let connections: AsyncStream<Connection>
    private let connectionContinuation: AsyncStream<Connection>.Continuation

    private var outbox: MQTTOutbox
    private var backoff: MQTTBackoff
    private var channel: (any Channel)?
    private var connected = false
    private var stopping = false
    private var loop: Task<Void, Never>?
    private var subscriptions: [(filter: String, qos: MQTTQoS)] = []
    private var subscribeIdentifier: UInt16 = 0
    private var grants: [UInt16: [UInt8]] = [:]
    public private(set) var statistics = Statistics()
    /// The last connection failure, for a person to read.
    public private(set) var lastError: (any Error)?
    private let report: @Sendable (String) -> Void

    /// `report` hears about connection failures, for a log line; accepted connections are
    /// announced on ``connections``.
    public init(configuration: Configuration, report: @escaping @Sendable (String) -> Void = { _ in }) {
        self.configuration = configuration
        outbox = MQTTOutbox(capacity: configuration.queueCapacity, inFlightLimit: configuration.inFlightLimit)
        backoff = configuration.backoff
        (messages, messageContinuation) = AsyncStream.makeStream(of: MQTTMessage.self,
                                                                 bufferingPolicy: .bufferingOldest(configuration.receiveBufferLimit))
        (connections, connectionContinuation) = AsyncStream.makeStream(of: Connection.self, bufferingPolicy: .bufferingNewest(1))
        self.report = report
    }

    public var isConnected: Bool { connected }

    /// Starts connecting (and reconnecting) in the background.
    public func start() {
        guard loop == nil, !stopping else { return }
        loop = Task { await self.connectionLoop() }
    }

    /// Queues a message; it is sent as soon as the connection allows.
    public func publish(_ message: MQTTMessage) throws(MQTTClientError) {
        guard !stopping else { throw .stopped }
        switch outbox.enqueue(message) {
        case .queued: break
        case .queuedDropping: statistics.dropped += 1
        case .refused:
            statistics.dropped += 1
            throw .queueFull(topic: message.topic)
        }
        pump()
    }

    /// Subscribes (and subscribes again after a reconnect without a session); returns the
    /// granted QoS codes once the broker acknowledges.
    @discardableResult
    public func subscribe(_ filters: [(filter: String, qos: MQTTQoS)], timeout: Duration = .seconds(10)) async throws -> [UInt8] {
        subscriptions.append(contentsOf: filters)
        let deadline = ContinuousClock.now + timeout
        while !connected {
            guard ContinuousClock.now < deadline, !stopping else { throw MQTTClientError.timedOut("a connection to subscribe on") }
            try await Task.sleep(for: .milliseconds(10))
        }
        let id = sendSubscribe(filters)
        while grants[id] == nil {
            guard ContinuousClock.now < deadline, !stopping else { throw MQTTClientError.timedOut("SUBACK") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return grants.removeValue(forKey: id) ?? []
    }

    /// Waits until nothing waits or is unacknowledged; false when `timeout` passed first.
    public func flush(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !outbox.isIdle {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Waits until the broker accepted a connection; false when `timeout` passed first.
    public func waitUntilConnected(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !connected {
            guard ContinuousClock.now < deadline, !stopping else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Sends what is queued (up to `flushTimeout`), then DISCONNECT, so the broker discards
    /// the will, and stops reconnecting. A client between connections that still holds messages
    /// (a stopping gateway's `offline`) waits within the same time for the reconnect, instead
    /// of leaving them unsent.
    public func disconnect(flushTimeout: Duration = .seconds(5)) async {
        let deadline = ContinuousClock.now + flushTimeout
        if !connected && !outbox.isIdle && loop != nil {
            _ = await waitUntilConnected(timeout: flushTimeout)
        }
        if connected { _ = await flush(timeout: max(.zero, deadline - ContinuousClock.now)) }
        stopping = true
        if let channel, connected {
            if let bytes = try? MQTTPacket.disconnect.encoded() {
                try? await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
            }
            try? await channel.close()
        }
        loop?.cancel()
        await loop?.value
        messageContinuation.finish()
        connectionContinuation.finish()
    }

    // MARK: - Connection

    private func connectionLoop() async {
        while !stopping && !Task.isCancelled {
            do {
                try await connectOnce()
            } catch {
                lastError = error
                if !stopping { report("MQTT \(configuration.broker): \(error)") }
            }
            guard !stopping && !Task.isCancelled else { break }
            let delay = backoff.nextDelay()
            try? await Task.sleep(for: delay)
        }
    }

    private func connectOnce() async throws {
        let (events, continuation) = AsyncStream.makeStream(of: MQTTConnectionEvent.self, bufferingPolicy: .unbounded)
        let decoder = MQTTPacketDecoder(maximumPacketSize: configuration.maximumPacketSize)
        let sslContext = try makeSSLContext()
        let host = configuration.broker.host
        let keepAlive = configuration.keepAlive
        let serverHostname = host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? nil : host
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(Int64(configuration.connectTimeout.components.seconds)))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(MQTTChannelHandler(decoder: decoder, keepAlive: keepAlive, events: continuation))
                }
            }
        let channel = try await bootstrap.connect(host: host, port: configuration.broker.port).get()
        self.channel = channel
        defer {
            self.channel = nil
            connected = false
            channel.close(promise: nil)
        }
        let password = configuration.broker.password.map { Array($0.utf8) }
        try write(.connect(MQTTConnect(clientIdentifier: configuration.clientIdentifier, cleanSession: configuration.cleanSession,
                                       keepAlive: configuration.keepAlive, username: configuration.broker.username,
                                       password: password, will: configuration.will)), on: channel)
        let timeout = configuration.connectTimeout
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            if !self.connected { channel.close(promise: nil) }
        }
        defer { watchdog.cancel() }
        var failure: (any Error)?
        for await event in events {
            switch event {
            case .packet(.connAck(let sessionPresent, let code)):
                guard !connected else { throw MQTTClientError.protocolViolation("a second CONNACK") }
                guard code == .accepted else { throw MQTTClientError.refused(code) }
                connected = true
                backoff.reset()
                statistics.connections += 1
                onConnected(sessionPresent: sessionPresent, channel: channel)
                connectionContinuation.yield(Connection(number: statistics.connections, broker: configuration.broker, sessionPresent: sessionPresent))
            case .packet(let packet):
                guard connected else { throw MQTTClientError.protocolViolation("\(packet.type) before CONNACK") }
                handle(packet, channel: channel)
            case .failure(let error):
                failure = error
            case .closed:
                break
            }
        }
        if let failure { throw failure }
        if !connected { throw MQTTClientError.timedOut("CONNACK") }
    }

    private func onConnected(sessionPresent: Bool, channel: any Channel) {
        let resends = outbox.resends
        for publish in resends {
            try? write(.publish(publish), on: channel)
        }
        statistics.resent += resends.count
        if let birth = configuration.birth, !stopping { outbox.enqueueFirst(birth) }
        if !sessionPresent && !subscriptions.isEmpty {
            _ = sendSubscribe(subscriptions)
        }
        pump()
    }

    private func handle(_ packet: MQTTPacket, channel: any Channel) {
        switch packet {
        case .pubAck(let id):
            if outbox.acknowledge(id) { statistics.acknowledged += 1 }
            pump()
        case .publish(let publish):
            statistics.received += 1
            messageContinuation.yield(publish.message)
            if let id = publish.packetIdentifier { try? write(.pubAck(packetIdentifier: id), on: channel) }
        case .subAck(let id, let codes):
            grants[id] = codes
        case .pingResp:
            statistics.pingsAnswered += 1
        default:
            lastError = MQTTClientError.protocolViolation("unexpected \(packet.type) from the broker")
            channel.close(promise: nil)
        }
    }

    private func sendSubscribe(_ filters: [(filter: String, qos: MQTTQoS)]) -> UInt16 {
        subscribeIdentifier = subscribeIdentifier == UInt16.max ? 1 : subscribeIdentifier + 1
        if let channel { try? write(.subscribe(packetIdentifier: subscribeIdentifier, filters: filters), on: channel) }
        return subscribeIdentifier
    }

    /// Moves queued messages onto the connection while the in-flight window allows. Writes are
    /// not awaited: they keep their order, and a failed write shows as the connection closing,
    /// after which unacknowledged QoS 1 messages are sent again.
    private func pump() {
        guard connected, let channel else { return }
        while let publish = outbox.nextToSend() {
            do {
                try write(.publish(publish), on: channel)
                statistics.published += 1
            } catch {
                // Unencodable (a topic with a wildcard): it can never be sent.
                if let id = publish.packetIdentifier { outbox.acknowledge(id) }
                statistics.dropped += 1
                report("MQTT: dropped a message that cannot be encoded: \(error)")
            }
        }
    }

    private func write(_ packet: MQTTPacket, on channel: any Channel) throws(MQTTEncodeError) {
        channel.writeAndFlush(ByteBuffer(bytes: try packet.encoded()), promise: nil)
    }

    private func makeSSLContext() throws -> NIOSSLContext? {
        guard configuration.broker.useTLS else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = configuration.trustedCertificatesFile { tls.trustRoots = .file(file) }
        return try NIOSSLContext(configuration: tls)
    }
}
