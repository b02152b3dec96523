/// A packet that cannot be put on the wire, and which field is at fault.
public struct MQTTEncodeError: Error, Sendable, Hashable, CustomStringConvertible {
    public var field: String
    public var reason: String
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }
    public var description: String { "cannot encode MQTT \(field): \(reason)" }
}

extension MQTTPacket {
    /// The largest remaining length four bytes of variable-length encoding can express (§2.2.3).
    public static let maximumRemainingLength = 268_435_455

    /// The packet's bytes: fixed header, variable header and payload.
    public func encoded() throws(MQTTEncodeError) -> [UInt8] {
        var body: [UInt8] = []
        var flags: UInt8 = 0
        switch self {
        case .connect(let connect):
            try body.appendString("MQTT", field: "CONNECT protocol name")
            body.append(4)  // protocol level 4 is MQTT 3.1.1 (§3.1.2.2)
            var connectFlags: UInt8 = connect.cleanSession ? 0x02 : 0
            if let will = connect.will {
                connectFlags |= 0x04 | (will.qos.rawValue << 3) | (will.retain ? 0x20 : 0)
            }
            if connect.password != nil {
                guard connect.username != nil else {
                    throw MQTTEncodeError(field: "CONNECT password", reason: "MQTT 3.1.1 sends a password only with a user name (§3.1.2.9)")
                }
                connectFlags |= 0x40
            }
            if connect.username != nil { connectFlags |= 0x80 }
            body.append(connectFlags)
            body.appendUInt16(connect.keepAlive)
            try body.appendString(connect.clientIdentifier, field: "CONNECT client identifier")
            if let will = connect.will {
                try body.appendString(will.topic, field: "CONNECT will topic")
                try body.appendBinary(will.payload, field: "CONNECT will message")
            }
            if let username = connect.username { try body.appendString(username, field: "CONNECT user name") }
            if let password = connect.password { try body.appendBinary(password, field: "CONNECT password") }
        case .connAck(let sessionPresent, let returnCode):
            body = [sessionPresent ? 1 : 0, returnCode.rawValue]
        case .publish(let publish):
            let message = publish.message
            flags = (publish.duplicate ? 0x08 : 0) | (message.qos.rawValue << 1) | (message.retain ? 0x01 : 0)
            guard !message.topic.isEmpty, !message.topic.contains(where: { $0 == "+" || $0 == "#" }) else {
                throw MQTTEncodeError(field: "PUBLISH topic", reason: "a topic name is not empty and has no wildcard + or # (§3.3.2.1), got '\(message.topic.prefix(80))'")
            }
            try body.appendString(message.topic, field: "PUBLISH topic")
            switch (message.qos, publish.packetIdentifier) {
            case (.atMostOnce, nil):
                if publish.duplicate { throw MQTTEncodeError(field: "PUBLISH DUP flag", reason: "QoS 0 messages are never duplicates (§3.3.1.1)") }
            case (.atLeastOnce, let id?) where id != 0: body.appendUInt16(id)
            default:
                throw MQTTEncodeError(field: "PUBLISH packet identifier", reason: "QoS 1 needs a non-zero identifier and QoS 0 none (§2.3.1)")
            }
            body.append(contentsOf: message.payload)
        case .pubAck(let id):
            body.appendUInt16(id)
        case .subscribe(let id, let filters):
            flags = 0x02  // reserved bits of SUBSCRIBE are 0010 (§3.8.1)
            guard !filters.isEmpty else { throw MQTTEncodeError(field: "SUBSCRIBE filters", reason: "at least one topic filter is needed (§3.8.3)") }
            body.appendUInt16(id)
            for entry in filters {
                try body.appendString(entry.filter, field: "SUBSCRIBE topic filter")
                body.append(entry.qos.rawValue)
            }
        case .subAck(let id, let codes):
            body.appendUInt16(id)
            body.append(contentsOf: codes)
        case .pingReq, .pingResp, .disconnect:
            break
        }
        guard body.count <= Self.maximumRemainingLength else {
            throw MQTTEncodeError(field: "\(type) remaining length", reason: "\(body.count) bytes is more than MQTT's \(Self.maximumRemainingLength)")
        }
        var packet: [UInt8] = [type.rawValue << 4 | flags]
        packet.reserveCapacity(body.count + 5)
        var length = body.count
        repeat {
            var digit = UInt8(length % 128)
            length /= 128
            if length > 0 { digit |= 0x80 }
            packet.append(digit)
        } while length > 0
        packet.append(contentsOf: body)
        return packet
    }
}

extension [UInt8] {
    mutating func appendUInt16(_ value: UInt16) {
        append(UInt8(value >> 8))
        append(UInt8(value & 0xFF))
    }

    mutating func appendString(_ text: String, field: String) throws(MQTTEncodeError) {
        let bytes = Array(text.utf8)
        guard !bytes.contains(0) else { throw MQTTEncodeError(field: field, reason: "UTF-8 strings in MQTT must not contain U+0000 (§1.5.3)") }
        try appendBinary(bytes, field: field)
    }

    mutating func appendBinary(_ bytes: [UInt8], field: String) throws(MQTTEncodeError) {
        guard bytes.count <= Int(UInt16.max) else {
            throw MQTTEncodeError(field: field, reason: "\(bytes.count) bytes is more than a two-byte length allows (65535)")
        }
        appendUInt16(UInt16(bytes.count))
        append(contentsOf: bytes)
    }
}
