/// Bytes that are not a well-formed MQTT 3.1.1 packet: which packet and field, where (the byte
/// offset from the packet's first byte), what was expected and what was found.
public struct MQTTDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    public var packet: String
    public var field: String
    public var offset: Int
    public var expected: String
    public var found: String

    public init(packet: String, field: String, offset: Int, expected: String, found: String) {
        self.packet = packet
        self.field = field
        self.offset = offset
        self.expected = expected
        self.found = found
    }

    public var description: String {
        "malformed MQTT \(packet): \(field) at byte \(offset): expected \(expected), found \(found)"
    }
}

/// Reads packets from the front of a byte stream. It never reads past the bytes it is given,
/// refuses a packet longer than `maximumPacketSize` as soon as its length is known (so a
/// flood never makes it wait for or hold more), and names the field and offset of any fault.
public struct MQTTPacketDecoder: Sendable {
    /// The largest remaining length accepted, in bytes.
    public var maximumPacketSize: Int
    /// The most topic filters accepted in one SUBSCRIBE or return codes in one SUBACK.
    public var maximumFilterCount: Int

    public init(maximumPacketSize: Int = 1 << 20, maximumFilterCount: Int = 1024) {
        self.maximumPacketSize = min(maximumPacketSize, MQTTPacket.maximumRemainingLength)
        self.maximumFilterCount = maximumFilterCount
    }

    /// The first packet in `bytes` and how many bytes it took, or nil when `bytes` ends before it does.
    public func decode(_ bytes: UnsafeRawBufferPointer) throws(MQTTDecodeError) -> (packet: MQTTPacket, length: Int)? {
        guard let first = bytes.first else { return nil }
        let type = MQTTPacketType(rawValue: first >> 4)
        var remaining = 0
        var multiplier = 1
        var index = 1
        while true {
            guard index < bytes.count else { return nil }
            guard index <= 4 else {
                throw MQTTDecodeError(packet: type.description, field: "remaining length", offset: index,
                                      expected: "at most 4 length bytes", found: "a continuation bit on the 4th")
            }
            let digit = bytes[index]
            remaining += Int(digit & 0x7F) * multiplier
            multiplier *= 128
            index += 1
            if digit & 0x80 == 0 { break }
        }
        guard remaining <= maximumPacketSize else {
            throw MQTTDecodeError(packet: type.description, field: "remaining length", offset: 1,
                                  expected: "at most \(maximumPacketSize) bytes", found: "\(remaining)")
        }
        guard bytes.count - index >= remaining else { return nil }
        var reader = PacketReader(bytes: bytes, position: index, end: index + remaining, packet: type.description)
        let packet = try decodeBody(type: type, flags: first & 0x0F, reader: &reader)
        return (packet, index + remaining)
    }

    /// Convenience for byte arrays.
    public func decode(_ bytes: [UInt8]) throws(MQTTDecodeError) -> (packet: MQTTPacket, length: Int)? {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(MQTTDecodeError) in try decode(buffer) } }
        return try result.get()
    }

    private func decodeBody(type: MQTTPacketType, flags: UInt8, reader: inout PacketReader) throws(MQTTDecodeError) -> MQTTPacket {
        func requireFlags(_ expected: UInt8) throws(MQTTDecodeError) {
            guard flags == expected else {
                throw MQTTDecodeError(packet: type.description, field: "fixed header flags", offset: 0,
                                      expected: "0x\(String(expected, radix: 16))", found: "0x\(String(flags, radix: 16))")
            }
        }
        switch type {
        case .connect:
            try requireFlags(0)
            return .connect(try decodeConnect(&reader))
        case .connAck:
            try requireFlags(0)
            try reader.requireLength(2)
            let acknowledgeFlags = try reader.readByte("connect acknowledge flags")
            guard acknowledgeFlags & 0xFE == 0 else {
                throw reader.error("connect acknowledge flags", at: reader.position - 1, expected: "bits 7–1 zero", found: "0x\(String(acknowledgeFlags, radix: 16))")
            }
            let code = try reader.readByte("return code")
            guard code <= 5 else { throw reader.error("return code", at: reader.position - 1, expected: "0…5", found: "\(code)") }
            return .connAck(sessionPresent: acknowledgeFlags == 1, returnCode: MQTTConnectReturnCode(rawValue: code))
        case .publish:
            return .publish(try decodePublish(flags: flags, reader: &reader))
        case .pubAck:
            try requireFlags(0)
            try reader.requireLength(2)
            return .pubAck(packetIdentifier: try reader.readPacketIdentifier())
        case .subscribe:
            try requireFlags(2)
            let id = try reader.readPacketIdentifier()
            var filters: [(filter: String, qos: MQTTQoS)] = []
            while !reader.atEnd {
                guard filters.count < maximumFilterCount else {
                    throw reader.error("topic filters", at: reader.position, expected: "at most \(maximumFilterCount)", found: "more")
                }
                let filter = try reader.readString("topic filter")
                guard !filter.isEmpty else { throw reader.error("topic filter", at: reader.position - 2, expected: "at least one character", found: "an empty filter") }
                let requested = try reader.readByte("requested QoS")
                guard let qos = MQTTQoS(rawValue: requested) else {
                    throw reader.error("requested QoS", at: reader.position - 1, expected: "0 or 1 (this client's levels)", found: "\(requested)")
                }
                filters.append((filter, qos))
            }
            guard !filters.isEmpty else { throw reader.error("topic filters", at: reader.position, expected: "at least one", found: "none") }
            return .subscribe(packetIdentifier: id, filters: filters)
        case .subAck:
            try requireFlags(0)
            let id = try reader.readPacketIdentifier()
            var codes: [UInt8] = []
            while !reader.atEnd {
                guard codes.count < maximumFilterCount else {
                    throw reader.error("return codes", at: reader.position, expected: "at most \(maximumFilterCount)", found: "more")
                }
                let code = try reader.readByte("return code")
                guard code <= 2 || code == 0x80 else {
                    throw reader.error("return code", at: reader.position - 1, expected: "0, 1, 2 or 0x80", found: "0x\(String(code, radix: 16))")
                }
                codes.append(code)
            }
            guard !codes.isEmpty else { throw reader.error("return codes", at: reader.position, expected: "at least one", found: "none") }
            return .subAck(packetIdentifier: id, returnCodes: codes)
        case .pingReq, .pingResp, .disconnect:
            try requireFlags(0)
            try reader.requireLength(0)
            return type == .pingReq ? .pingReq : type == .pingResp ? .pingResp : .disconnect
        default:
            throw MQTTDecodeError(packet: type.description, field: "packet type", offset: 0,
                                  expected: "CONNECT, CONNACK, PUBLISH, PUBACK, SUBSCRIBE, SUBACK, PINGREQ, PINGRESP or DISCONNECT (QoS 0 and 1 only)",
                                  found: "type \(type.rawValue)")
        }
    }

    private func decodeConnect(_ reader: inout PacketReader) throws(MQTTDecodeError) -> MQTTConnect {
        let name = try reader.readString("protocol name")
        guard name == "MQTT" else { throw reader.error("protocol name", at: 2, expected: "'MQTT'", found: "'\(name.prefix(20))'") }
        let level = try reader.readByte("protocol level")
        guard level == 4 else { throw reader.error("protocol level", at: reader.position - 1, expected: "4 (MQTT 3.1.1)", found: "\(level)") }
        let flagsOffset = reader.position
        let flags = try reader.readByte("connect flags")
        guard flags & 0x01 == 0 else { throw reader.error("connect flags", at: flagsOffset, expected: "reserved bit 0 clear", found: "it set") }
        let willFlag = flags & 0x04 != 0
        let willQoSBits = (flags >> 3) & 0x03
        guard willFlag || (willQoSBits == 0 && flags & 0x20 == 0) else {
            throw reader.error("connect flags", at: flagsOffset, expected: "no will QoS or retain without the will flag", found: "0x\(String(flags, radix: 16))")
        }
        guard let willQoS = MQTTQoS(rawValue: willQoSBits) else {
            throw reader.error("will QoS", at: flagsOffset, expected: "0 or 1", found: "\(willQoSBits)")
        }
        let hasUsername = flags & 0x80 != 0, hasPassword = flags & 0x40 != 0
        guard hasUsername || !hasPassword else {
            throw reader.error("connect flags", at: flagsOffset, expected: "a password only with a user name", found: "a password flag alone")
        }
        let keepAlive = try reader.readUInt16("keep alive")
        let clientIdentifier = try reader.readString("client identifier")
        var will: MQTTMessage?
        if willFlag {
            let topic = try reader.readString("will topic")
            let payload = try reader.readBinary("will message")
            will = MQTTMessage(topic: topic, payload: payload, qos: willQoS, retain: flags & 0x20 != 0)
        }
        let username = hasUsername ? try reader.readString("user name") : nil
        let password = hasPassword ? try reader.readBinary("password") : nil
        guard reader.atEnd else { throw reader.error("payload", at: reader.position, expected: "the end of CONNECT", found: "\(reader.end - reader.position) more bytes") }
        return MQTTConnect(clientIdentifier: clientIdentifier, cleanSession: flags & 0x02 != 0, keepAlive: keepAlive,
                           username: username, password: password, will: will)
    }

    private func decodePublish(flags: UInt8, reader: inout PacketReader) throws(MQTTDecodeError) -> MQTTPublish {
        let qosBits = (flags >> 1) & 0x03
        guard let qos = MQTTQoS(rawValue: qosBits) else {
            throw reader.error("fixed header QoS", at: 0, expected: "0 or 1 (this client's levels)", found: "\(qosBits)")
        }
        let duplicate = flags & 0x08 != 0
        guard !(duplicate && qos == .atMostOnce) else {
            throw reader.error("fixed header DUP flag", at: 0, expected: "clear on QoS 0", found: "set")
        }
        let topicOffset = reader.position
        let topic = try reader.readString("topic name")
        guard !topic.isEmpty, !topic.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) else {
            throw reader.error("topic name", at: topicOffset, expected: "a non-empty name without + or #", found: "'\(topic.prefix(80))'")
        }
        let id = qos == .atLeastOnce ? try reader.readPacketIdentifier() : nil
        let payload = reader.readRest()
        return MQTTPublish(message: MQTTMessage(topic: topic, payload: payload, qos: qos, retain: flags & 0x01 != 0),
                           packetIdentifier: id, duplicate: duplicate)
    }
}

/// A cursor over one packet's variable header and payload, bounded by its remaining length.
struct PacketReader {
    let bytes: UnsafeRawBufferPointer
    var position: Int
    let end: Int
    let packet: String

    var atEnd: Bool { position >= end }

    func error(_ field: String, at offset: Int, expected: String, found: String) -> MQTTDecodeError {
        MQTTDecodeError(packet: packet, field: field, offset: offset, expected: expected, found: found)
    }

    func requireLength(_ length: Int) throws(MQTTDecodeError) {
        guard end - position == length else {
            throw error("remaining length", at: 1, expected: "\(length)", found: "\(end - position)")
        }
    }

    mutating func readByte(_ field: String) throws(MQTTDecodeError) -> UInt8 {
        guard position < end else { throw error(field, at: position, expected: "1 byte", found: "the end of the packet") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func readUInt16(_ field: String) throws(MQTTDecodeError) -> UInt16 {
        guard end - position >= 2 else { throw error(field, at: position, expected: "2 bytes", found: "\(end - position)") }
        defer { position += 2 }
        return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
    }

    mutating func readPacketIdentifier() throws(MQTTDecodeError) -> UInt16 {
        let id = try readUInt16("packet identifier")
        guard id != 0 else { throw error("packet identifier", at: position - 2, expected: "a non-zero identifier", found: "0") }
        return id
    }

    mutating func readBinary(_ field: String) throws(MQTTDecodeError) -> [UInt8] {
        let lengthOffset = position
        let length = Int(try readUInt16("\(field) length"))
        guard end - position >= length else {
            throw error(field, at: lengthOffset, expected: "\(length) bytes as its length says", found: "\(end - position) left in the packet")
        }
        defer { position += length }
        return Array(UnsafeRawBufferPointer(rebasing: bytes[position..<position + length]))
    }

    mutating func readString(_ field: String) throws(MQTTDecodeError) -> String {
        let start = position
        let raw = try readBinary(field)
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw error(field, at: start, expected: "UTF-8 text", found: "invalid UTF-8")
        }
        guard !raw.contains(0) else { throw error(field, at: start, expected: "no U+0000", found: "a NUL character") }
        return text
    }

    mutating func readRest() -> [UInt8] {
        defer { position = end }
        return Array(UnsafeRawBufferPointer(rebasing: bytes[position..<end]))
    }
}
