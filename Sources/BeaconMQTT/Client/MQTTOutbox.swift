import NIOCore

/// What waits to be published and what the broker has not yet acknowledged: a pure state
/// machine, so that the client actor only moves bytes and the rules are tested without sockets.
///
/// - At most `capacity` messages wait. When full, the oldest waiting QoS 0 message makes room;
///   with none, the new message is refused (a QoS 0 one rather than dropping a QoS 1).
/// - At most `inFlightLimit` QoS 1 messages are unacknowledged at once; they are kept, in the
///   order sent, until PUBACK, and after a reconnect all are sent again with DUP set.
public struct MQTTOutbox: Sendable {
    public enum Admission: Sendable, Hashable {
        case queued
        /// Queued after dropping this older QoS 0 message.
        case queuedDropping(MQTTMessage)
        /// Not queued: the queue is full of QoS 1 messages.
        case refused
    }

    public let capacity: Int
    public let inFlightLimit: Int
    private var waiting = CircularBuffer<MQTTMessage>()
    private var inFlight: [(id: UInt16, message: MQTTMessage)] = []
    private var lastIdentifier: UInt16 = 0

    public init(capacity: Int = 10_000, inFlightLimit: Int = 32) {
        precondition(capacity > 0 && inFlightLimit > 0 && inFlightLimit < Int(UInt16.max))
        self.capacity = capacity
        self.inFlightLimit = inFlightLimit
    }

    public var waitingCount: Int { waiting.count }
    public var inFlightCount: Int { inFlight.count }
    /// Nothing waits and nothing is unacknowledged.
    public var isIdle: Bool { waiting.isEmpty && inFlight.isEmpty }

    public mutating func enqueue(_ message: MQTTMessage) -> Admission {
        if waiting.count < capacity {
            waiting.append(message)
            return .queued
        }
        guard let oldest = waiting.firstIndex(where: { $0.qos == .atMostOnce }) else { return .refused }
        let dropped = waiting.remove(at: oldest)
        waiting.append(message)
        return .queuedDropping(dropped)
    }

    /// Puts a message ahead of everything waiting (a birth message after a reconnect), even
    /// beyond `capacity`: it is one message, and it must not be refused for the backlog.
    public mutating func enqueueFirst(_ message: MQTTMessage) {
        waiting.prepend(message)
    }

    /// The next PUBLISH to send, or nil when nothing waits or the next QoS 1 message must wait
    /// for an acknowledgment.
    public mutating func nextToSend() -> MQTTPublish? {
        guard let message = waiting.first else { return nil }
        if message.qos == .atMostOnce {
            return MQTTPublish(message: waiting.removeFirst())
        }
        guard inFlight.count < inFlightLimit else { return nil }
        _ = waiting.removeFirst()
        let id = freshIdentifier()
        inFlight.append((id, message))
        return MQTTPublish(message: message, packetIdentifier: id)
    }

    /// Forgets an acknowledged message; false for an identifier not in flight.
    @discardableResult
    public mutating func acknowledge(_ id: UInt16) -> Bool {
        guard let index = inFlight.firstIndex(where: { $0.id == id }) else { return false }
        inFlight.remove(at: index)
        return true
    }

    /// Every unacknowledged message with its identifier and DUP set, oldest first (§4.4: on
    /// reconnect with a session, unacknowledged PUBLISH packets are sent again).
    public var resends: [MQTTPublish] {
        inFlight.map { MQTTPublish(message: $0.message, packetIdentifier: $0.id, duplicate: true) }
    }

    private mutating func freshIdentifier() -> UInt16 {
        repeat {
            lastIdentifier = lastIdentifier == UInt16.max ? 1 : lastIdentifier + 1
        } while inFlight.contains(where: { $0.id == lastIdentifier })
        return lastIdentifier
    }
}

/// Reconnect delays: doubling from `initial` up to `maximum`, back to `initial` after a
/// connection that was accepted.
public struct MQTTBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration
    private var current: Duration

    public init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(10)) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        current = initial
    }

    public mutating func nextDelay() -> Duration {
        defer { current = min(current * 2, maximum) }
        return current
    }

    public mutating func reset() { current = initial }
}
