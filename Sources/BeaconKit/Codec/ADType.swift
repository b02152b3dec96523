/// An AD structure type (Bluetooth Assigned Numbers, section 2.3 "Common Data Types").
public struct ADType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01 Flags (Core Specification Supplement, Part A, 1.3).
    public static let flags = ADType(rawValue: 0x01)
    /// 0x02 Incomplete List of 16-bit Service Class UUIDs.
    public static let incompleteServiceUUIDs16 = ADType(rawValue: 0x02)
    /// 0x03 Complete List of 16-bit Service Class UUIDs.
    public static let completeServiceUUIDs16 = ADType(rawValue: 0x03)
    /// 0x08 Shortened Local Name.
    public static let shortenedLocalName = ADType(rawValue: 0x08)
    /// 0x09 Complete Local Name.
    public static let completeLocalName = ADType(rawValue: 0x09)
    /// 0x0A Tx Power Level.
    public static let txPowerLevel = ADType(rawValue: 0x0A)
    /// 0x16 Service Data - 16-bit UUID.
    public static let serviceData16 = ADType(rawValue: 0x16)
    /// 0xFF Manufacturer Specific Data (Core Specification Supplement, Part A, 1.4).
    public static let manufacturerSpecificData = ADType(rawValue: 0xFF)

    public var description: String {
        switch self {
        case .flags: "flags"
        case .incompleteServiceUUIDs16: "16-bit service UUIDs (incomplete)"
        case .completeServiceUUIDs16: "16-bit service UUIDs"
        case .shortenedLocalName: "short name"
        case .completeLocalName: "name"
        case .txPowerLevel: "TX power"
        case .serviceData16: "service data"
        case .manufacturerSpecificData: "manufacturer data"
        default: "AD type \(hexByte(rawValue))"
        }
    }
}

/// A Bluetooth SIG company identifier (Assigned Numbers, "Company Identifiers"), carried
/// little-endian in the first two bytes of manufacturer-specific data.
public struct CompanyIdentifier: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x004C Apple, Inc.
    public static let apple = CompanyIdentifier(rawValue: 0x004C)
    /// 0x0118 Radius Networks, Inc. (AltBeacon's author).
    public static let radiusNetworks = CompanyIdentifier(rawValue: 0x0118)

    public var description: String { hexWord(rawValue) }
}

/// Flags AD values (Core Specification Supplement, Part A, 1.3).
public enum AdvertisingFlags {
    /// 0x1A: LE General Discoverable, BR/EDR not supported bit clear, simultaneous LE and BR/EDR
    /// (controller and host). Apple's AirLocate and the iBeacon book use it.
    public static let airLocate: UInt8 = 0x1A
    /// 0x06: LE General Discoverable, BR/EDR not supported. Common on dedicated beacons.
    public static let leOnly: UInt8 = 0x06
}
