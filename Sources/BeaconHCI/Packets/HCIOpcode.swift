/// An HCI command opcode: a 6-bit Opcode Group Field and a 10-bit Opcode Command Field
/// (Core Spec v5.4, Vol 4, Part E, 5.4.1), sent little-endian.
public struct HCIOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(group: UInt8, command: UInt16) {
        rawValue = UInt16(group & 0x3F) << 10 | (command & 0x03FF)
    }

    public var group: UInt8 { UInt8(rawValue >> 10) }
    public var command: UInt16 { rawValue & 0x03FF }

    /// HCI_Set_Event_Mask, OGF 0x03 OCF 0x0001 (Vol 4, Part E, 7.3.1).
    public static let setEventMask = HCIOpcode(rawValue: 0x0C01)
    /// HCI_Reset, OGF 0x03 OCF 0x0003 (Vol 4, Part E, 7.3.2).
    public static let reset = HCIOpcode(rawValue: 0x0C03)
    /// HCI_Read_Local_Version_Information, OGF 0x04 OCF 0x0001 (Vol 4, Part E, 7.4.1).
    public static let readLocalVersionInformation = HCIOpcode(rawValue: 0x1001)
    /// HCI_Read_BD_ADDR, OGF 0x04 OCF 0x0009 (Vol 4, Part E, 7.4.6).
    public static let readBDAddress = HCIOpcode(rawValue: 0x1009)
    /// HCI_LE_Set_Event_Mask, OGF 0x08 OCF 0x0001 (Vol 4, Part E, 7.8.1).
    public static let leSetEventMask = HCIOpcode(rawValue: 0x2001)
    /// HCI_LE_Set_Advertising_Parameters, OGF 0x08 OCF 0x0006 (Vol 4, Part E, 7.8.5).
    public static let leSetAdvertisingParameters = HCIOpcode(rawValue: 0x2006)
    /// HCI_LE_Set_Advertising_Data, OGF 0x08 OCF 0x0008 (Vol 4, Part E, 7.8.7).
    public static let leSetAdvertisingData = HCIOpcode(rawValue: 0x2008)
    /// HCI_LE_Set_Advertising_Enable, OGF 0x08 OCF 0x000A (Vol 4, Part E, 7.8.9).
    public static let leSetAdvertisingEnable = HCIOpcode(rawValue: 0x200A)
    /// HCI_LE_Set_Scan_Parameters, OGF 0x08 OCF 0x000B (Vol 4, Part E, 7.8.10).
    public static let leSetScanParameters = HCIOpcode(rawValue: 0x200B)
    /// HCI_LE_Set_Scan_Enable, OGF 0x08 OCF 0x000C (Vol 4, Part E, 7.8.11).
    public static let leSetScanEnable = HCIOpcode(rawValue: 0x200C)
    /// The "no command" opcode 0x0000 a controller uses in Command Complete/Status events that
    /// only hand out command credits (Vol 4, Part E, 7.7.14).
    public static let noOperation = HCIOpcode(rawValue: 0x0000)

    static let names: [UInt16: String] = [
        0x0000: "No Operation",
        0x0C01: "Set Event Mask", 0x0C03: "Reset",
        0x1001: "Read Local Version Information", 0x1009: "Read BD_ADDR",
        0x2001: "LE Set Event Mask", 0x2006: "LE Set Advertising Parameters",
        0x2008: "LE Set Advertising Data", 0x200A: "LE Set Advertising Enable",
        0x200B: "LE Set Scan Parameters", 0x200C: "LE Set Scan Enable",
    ]

    /// The command's name in the Core Spec, or nil for commands Proxima does not use.
    public var name: String? { Self.names[rawValue] }

    public var description: String {
        let hex = "0x" + String(rawValue, radix: 16, uppercase: true).leftPadded(to: 4)
        if let name { return "\(name) (\(hex))" }
        return "opcode \(hex) (OGF 0x\(String(group, radix: 16, uppercase: true)), OCF 0x\(String(command, radix: 16, uppercase: true)))"
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}

func hexByte(_ byte: UInt8) -> String {
    "0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
}

func hexBytes(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined(separator: " ")
}
