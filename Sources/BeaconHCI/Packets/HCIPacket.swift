import BeaconKit

/// One HCI packet as it crosses the host–controller boundary, with the H4 type byte apart from
/// the packet itself.
public struct HCIPacket: Sendable, Hashable {
    public var type: H4PacketType
    /// The HCI packet without the H4 type byte (for an event: code, length, parameters).
    public var body: [UInt8]

    public init(type: H4PacketType, body: [UInt8]) {
        self.type = type
        self.body = body
    }

    /// The packet as H4 puts it on a byte stream: type byte, then the body.
    public var h4Bytes: [UInt8] { [type.rawValue] + body }
}

/// Which way a packet went, as captures record it.
public enum PacketDirection: Sendable, Hashable {
    /// Host to controller (commands, outgoing data).
    case sent
    /// Controller to host (events, incoming data).
    case received
}

/// A packet with the moment it crossed and its direction: what captures store and replay.
public struct TimestampedPacket: Sendable, Hashable {
    /// Microseconds since 1970-01-01 UTC. Whole microseconds, so a packet written to a capture
    /// and read back carries exactly the same time.
    public var microseconds: Int64
    public var direction: PacketDirection
    public var packet: HCIPacket

    public init(microseconds: Int64, direction: PacketDirection, packet: HCIPacket) {
        self.microseconds = microseconds
        self.direction = direction
        self.packet = packet
    }

    /// Seconds since 1970, the clock of live `Sighting`s.
    public var seconds: Double { Double(microseconds) / 1_000_000 }
}

/// An HCI command packet: opcode, then a parameter block of at most 255 bytes
/// (Core Spec v5.4, Vol 4, Part E, 5.4.1).
public struct HCICommand: Sendable, Hashable, CustomStringConvertible {
    public var opcode: HCIOpcode
    public var parameters: [UInt8]

    public init(opcode: HCIOpcode, parameters: [UInt8] = []) {
        precondition(parameters.count <= 255, "HCI command parameters are at most 255 bytes")
        self.opcode = opcode
        self.parameters = parameters
    }

    /// The command packet body (without the H4 byte): opcode little-endian, length, parameters.
    public var body: [UInt8] {
        [UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), UInt8(parameters.count)] + parameters
    }

    public var packet: HCIPacket { HCIPacket(type: .command, body: body) }

    public var description: String { "\(opcode) [\(hexBytes(parameters))]" }

    /// Reads a command packet body (as written by `body`), naming the field and offset when it
    /// is malformed.
    public init(body: [UInt8]) throws(DecodeError) {
        guard body.count >= 3 else {
            throw DecodeError(field: "command header", offset: 0, expected: "3 bytes (opcode, length)",
                              found: "\(body.count) bytes")
        }
        let length = Int(body[2])
        guard body.count == 3 + length else {
            throw DecodeError(field: "parameter total length", offset: 2, expected: "\(body.count - 3)",
                              found: "\(length)")
        }
        self.init(opcode: HCIOpcode(rawValue: UInt16(body[0]) | UInt16(body[1]) << 8),
                  parameters: Array(body[3...]))
    }
}

/// An HCI event packet: event code, then up to 255 parameter bytes (Vol 4, Part E, 5.4.4).
public struct HCIEvent: Sendable, Hashable, CustomStringConvertible {
    public var code: HCIEventCode
    public var parameters: [UInt8]

    public init(code: HCIEventCode, parameters: [UInt8]) {
        self.code = code
        self.parameters = parameters
    }

    /// Reads an event packet body (code, length, parameters; no H4 byte). The length byte must
    /// match the bytes present: an event is never read past its end nor silently truncated.
    public init(body: [UInt8]) throws(DecodeError) {
        guard body.count >= 2 else {
            throw DecodeError(field: "event header", offset: 0, expected: "2 bytes (event code, length)",
                              found: "\(body.count) bytes")
        }
        let length = Int(body[1])
        guard body.count == 2 + length else {
            throw DecodeError(field: "parameter total length", offset: 1,
                              expected: "\(body.count - 2) (the bytes that follow)", found: "\(length)")
        }
        self.init(code: HCIEventCode(rawValue: body[0]), parameters: Array(body[2...]))
    }

    public var body: [UInt8] { [code.rawValue, UInt8(parameters.count)] + parameters }
    public var packet: HCIPacket { HCIPacket(type: .event, body: body) }

    public var description: String { "\(code) [\(hexBytes(parameters))]" }

    /// Refuses an event of another kind, so a Command Status is never read as a Command Complete
    /// (or the reverse) by a caller that did not switch on the code first.
    func require(code expected: HCIEventCode) throws(DecodeError) {
        guard code == expected else {
            throw DecodeError(field: "event code", offset: 0, expected: "\(expected)", found: "\(code)")
        }
    }
}

/// Command Complete (Vol 4, Part E, 7.7.14): credits, the opcode it answers, return parameters.
/// For every command Proxima sends, the first return parameter is the status.
public struct CommandComplete: Sendable, Hashable {
    public var numberOfCommandPackets: UInt8
    public var opcode: HCIOpcode
    public var returnParameters: [UInt8]

    public init(numberOfCommandPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8]) {
        self.numberOfCommandPackets = numberOfCommandPackets
        self.opcode = opcode
        self.returnParameters = returnParameters
    }

    public init(event: HCIEvent) throws(DecodeError) {
        try event.require(code: .commandComplete)
        let bytes = event.parameters
        guard bytes.count >= 3 else {
            throw DecodeError(field: "Command Complete parameters", offset: 2,
                              expected: "at least 3 bytes (Num_HCI_Command_Packets, Command_Opcode)",
                              found: "\(bytes.count) bytes")
        }
        self.init(numberOfCommandPackets: bytes[0],
                  opcode: HCIOpcode(rawValue: UInt16(bytes[1]) | UInt16(bytes[2]) << 8),
                  returnParameters: Array(bytes[3...]))
    }

    /// The status that leads the return parameters, or nil when there are none (No Operation).
    public var status: HCIStatus? { returnParameters.first.map(HCIStatus.init(rawValue:)) }

    public var event: HCIEvent {
        HCIEvent(code: .commandComplete,
                 parameters: [numberOfCommandPackets, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8)]
                    + returnParameters)
    }
}

/// Command Status (Vol 4, Part E, 7.7.15): status, credits and the opcode it answers.
public struct CommandStatus: Sendable, Hashable {
    public var status: HCIStatus
    public var numberOfCommandPackets: UInt8
    public var opcode: HCIOpcode

    public init(status: HCIStatus, numberOfCommandPackets: UInt8, opcode: HCIOpcode) {
        self.status = status
        self.numberOfCommandPackets = numberOfCommandPackets
        self.opcode = opcode
    }

    public init(event: HCIEvent) throws(DecodeError) {
        try event.require(code: .commandStatus)
        let bytes = event.parameters
        guard bytes.count == 4 else {
            throw DecodeError(field: "Command Status parameters", offset: 2,
                              expected: "4 bytes (Status, Num_HCI_Command_Packets, Command_Opcode)",
                              found: "\(bytes.count) bytes")
        }
        self.init(status: HCIStatus(rawValue: bytes[0]), numberOfCommandPackets: bytes[1],
                  opcode: HCIOpcode(rawValue: UInt16(bytes[2]) | UInt16(bytes[3]) << 8))
    }

    public var event: HCIEvent {
        HCIEvent(code: .commandStatus,
                 parameters: [status.rawValue, numberOfCommandPackets,
                              UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8)])
    }
}
