/// Quality of service of a PUBLISH (MQTT 3.1.1 §4.3). This client sends and accepts 0 and 1;
/// exactly-once delivery (2) needs a four-packet exchange it does not implement.
public enum MQTTQoS: UInt8, Sendable, Hashable, Codable {
    case atMostOnce = 0
    case atLeastOnce = 1
}

/// The packet types of MQTT 3.1.1 §2.2.1 Table 2.1, by their value in the first byte's high nibble.
public struct MQTTPacketType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 1: client request to connect.
    public static let connect = MQTTPacketType(rawValue: 1)
    /// 2: connect acknowledgment.
    public static let connAck = MQTTPacketType(rawValue: 2)
    /// 3: publish message.
    public static let publish = MQTTPacketType(rawValue: 3)
    /// 4: publish acknowledgment (QoS 1).
    public static let pubAck = MQTTPacketType(rawValue: 4)
    /// 8: client subscribe request.
    public static let subscribe = MQTTPacketType(rawValue: 8)
    /// 9: subscribe acknowledgment.
    public static let subAck = MQTTPacketType(rawValue: 9)
    /// 12: ping request.
    public static let pingReq = MQTTPacketType(rawValue: 12)
    /// 13: ping response.
    public static let pingResp = MQTTPacketType(rawValue: 13)
    /// 14: client is disconnecting.
    public static let disconnect = MQTTPacketType(rawValue: 14)

    private static let names: [UInt8: String] = [
        1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP",
        8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE", 11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT",
    ]
    public var description: String { Self.names[rawValue] ?? "reserved type \(rawValue)" }
}

/// A message as the application sees it: where, what, how reliably, and whether the broker keeps it.
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    public init(topic: String, text: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }

    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// CONNECT's fields (§3.1).
public struct MQTTConnect: Sendable, Hashable {
    public var clientIdentifier: String
    public var cleanSession: Bool
    /// Seconds; 0 turns keep-alive off.
    public var keepAlive: UInt16
    public var username: String?
    public var password: [UInt8]?
    /// Published by the broker when the connection ends without a DISCONNECT.
    public var will: MQTTMessage?

    public init(clientIdentifier: String, cleanSession: Bool = true, keepAlive: UInt16 = 30,
                username: String? = nil, password: [UInt8]? = nil, will: MQTTMessage? = nil) {
        self.clientIdentifier = clientIdentifier
        self.cleanSession = cleanSession
        self.keepAlive = keepAlive
        self.username = username
        self.password = password
        self.will = will
    }
}

/// CONNACK's return code (§3.2.2.3, Table 3.1).
public struct MQTTConnectReturnCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x00: connection accepted.
    public static let accepted = MQTTConnectReturnCode(rawValue: 0)
    /// 0x01: the server does not support level 4 of the protocol.
    public static let unacceptableProtocolVersion = MQTTConnectReturnCode(rawValue: 1)
    /// 0x02: the client identifier is not allowed.
    public static let identifierRejected = MQTTConnectReturnCode(rawValue: 2)
    /// 0x03: the MQTT service is unavailable.
    public static let serverUnavailable = MQTTConnectReturnCode(rawValue: 3)
    /// 0x04: malformed user name or password.
    public static let badUsernameOrPassword = MQTTConnectReturnCode(rawValue: 4)
    /// 0x05: not authorized.
    public static let notAuthorized = MQTTConnectReturnCode(rawValue: 5)

    public var description: String {
        switch rawValue {
        case 0: "accepted"
        case 1: "unacceptable protocol version"
        case 2: "identifier rejected"
        case 3: "server unavailable"
        case 4: "bad user name or password"
        case 5: "not authorized"
        default: "reserved return code \(rawValue)"
        }
    }
}

/// PUBLISH's fields (§3.3); `packetIdentifier` is present exactly when QoS is 1.
public struct MQTTPublish: Sendable, Hashable {
    public var message: MQTTMessage
    public var packetIdentifier: UInt16?
    /// Set on a resend of a QoS 1 message the receiver may already have (§3.3.1.1).
    public var duplicate: Bool

    public init(message: MQTTMessage, packetIdentifier: UInt16? = nil, duplicate: Bool = false) {
        self.message = message
        self.packetIdentifier = packetIdentifier
        self.duplicate = duplicate
    }
}

/// One control packet of the subset this client speaks.
public enum MQTTPacket: Sendable, Hashable {
    case connect(MQTTConnect)
    case connAck(sessionPresent: Bool, returnCode: MQTTConnectReturnCode)
    case publish(MQTTPublish)
    case pubAck(packetIdentifier: UInt16)
    /// Topic filters with the greatest QoS each may be delivered at.
    case subscribe(packetIdentifier: UInt16, filters: [(filter: String, qos: MQTTQoS)])
    /// One code per filter: the granted QoS (0, 1, 2) or 0x80 for failure.
    case subAck(packetIdentifier: UInt16, returnCodes: [UInt8])
    case pingReq
    case pingResp
    case disconnect

    public var type: MQTTPacketType {
        switch self {
        case .connect: .connect
        case .connAck: .connAck
        case .publish: .publish
        case .pubAck: .pubAck
        case .subscribe: .subscribe
        case .subAck: .subAck
        case .pingReq: .pingReq
        case .pingResp: .pingResp
        case .disconnect: .disconnect
        }
    }

    public static func == (lhs: MQTTPacket, rhs: MQTTPacket) -> Bool {
        switch (lhs, rhs) {
        case (.connect(let a), .connect(let b)): a == b
        case (.connAck(let a, let b), .connAck(let c, let d)): a == c && b == d
        case (.publish(let a), .publish(let b)): a == b
        case (.pubAck(let a), .pubAck(let b)): a == b
        case (.subscribe(let a, let x), .subscribe(let b, let y)):
            a == b && x.map(\.filter) == y.map(\.filter) && x.map(\.qos) == y.map(\.qos)
        case (.subAck(let a, let x), .subAck(let b, let y)): a == b && x == y
        case (.pingReq, .pingReq), (.pingResp, .pingResp), (.disconnect, .disconnect): true
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        switch self {
        case .connect(let connect): hasher.combine(connect)
        case .connAck(let present, let code): hasher.combine(present); hasher.combine(code)
        case .publish(let publish): hasher.combine(publish)
        case .pubAck(let id): hasher.combine(id)
        case .subscribe(let id, let filters):
            hasher.combine(id)
            for entry in filters { hasher.combine(entry.filter); hasher.combine(entry.qos) }
        case .subAck(let id, let codes): hasher.combine(id); hasher.combine(codes)
        case .pingReq, .pingResp, .disconnect: break
        }
    }
}
