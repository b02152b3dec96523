/// A 48-bit Bluetooth device address. HCI carries it least significant byte first; people write
/// it most significant byte first, as `AA:BB:CC:DD:EE:FF`.
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The address as a 48-bit number, so `AA:BB:CC:DD:EE:FF` is 0xAABBCCDDEEFF.
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// Reads six bytes in HCI order (least significant first).
    public init(hciBytes bytes: some Collection<UInt8>) {
        precondition(bytes.count == 6, "a Bluetooth address is 6 bytes")
        var value: UInt64 = 0
        for (shift, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
        self.init(rawValue: value)
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (colons or dashes, either case).
    public init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.init(rawValue: value)
    }

    /// The six bytes in HCI order (least significant first).
    public var hciBytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64($0))) } }

    public var description: String {
        (0..<6).reversed().map { index in
            let byte = UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64(index)))
            return (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }.joined(separator: ":")
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.rawValue < rhs.rawValue }
}
