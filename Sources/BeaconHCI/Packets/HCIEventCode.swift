/// An HCI event code (Core Spec v5.4, Vol 4, Part E, 7.7).
public struct HCIEventCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Disconnection Complete, 0x05 (Vol 4, Part E, 7.7.5).
    public static let disconnectionComplete = HCIEventCode(rawValue: 0x05)
    /// Command Complete, 0x0E (Vol 4, Part E, 7.7.14).
    public static let commandComplete = HCIEventCode(rawValue: 0x0E)
    /// Command Status, 0x0F (Vol 4, Part E, 7.7.15).
    public static let commandStatus = HCIEventCode(rawValue: 0x0F)
    /// Hardware Error, 0x10 (Vol 4, Part E, 7.7.16).
    public static let hardwareError = HCIEventCode(rawValue: 0x10)
    /// LE Meta event, 0x3E (Vol 4, Part E, 7.7.65); the first parameter is the subevent code.
    public static let leMeta = HCIEventCode(rawValue: 0x3E)

    public var description: String {
        let name: String? = switch rawValue {
        case 0x05: "Disconnection Complete"
        case 0x0E: "Command Complete"
        case 0x0F: "Command Status"
        case 0x10: "Hardware Error"
        case 0x3E: "LE Meta"
        default: nil
        }
        return name.map { "\($0) (\(hexByte(rawValue)))" } ?? "event \(hexByte(rawValue))"
    }
}

/// An LE Meta subevent code (Core Spec v5.4, Vol 4, Part E, 7.7.65).
public struct LEMetaSubevent: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// LE Advertising Report, 0x02 (Vol 4, Part E, 7.7.65.2).
    public static let advertisingReport = LEMetaSubevent(rawValue: 0x02)
    /// LE Extended Advertising Report, 0x0D (Vol 4, Part E, 7.7.65.13).
    public static let extendedAdvertisingReport = LEMetaSubevent(rawValue: 0x0D)
}

/// The packet type byte that H4 framing puts before every HCI packet (Core Spec v5.4, Vol 4,
/// Part A, 2).
public struct H4PacketType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// HCI Command packet, 0x01.
    public static let command = H4PacketType(rawValue: 0x01)
    /// HCI ACL Data packet, 0x02.
    public static let aclData = H4PacketType(rawValue: 0x02)
    /// HCI Synchronous Data packet, 0x03.
    public static let synchronousData = H4PacketType(rawValue: 0x03)
    /// HCI Event packet, 0x04.
    public static let event = H4PacketType(rawValue: 0x04)
    /// HCI ISO Data packet, 0x05.
    public static let isoData = H4PacketType(rawValue: 0x05)

    public var description: String {
        switch rawValue {
        case 0x01: "command"
        case 0x02: "ACL data"
        case 0x03: "synchronous data"
        case 0x04: "event"
        case 0x05: "ISO data"
        default: "unknown packet type \(hexByte(rawValue))"
        }
    }
}
