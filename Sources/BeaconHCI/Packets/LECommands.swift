import BeaconKit

/// Advertising_Type of LE Set Advertising Parameters (Core Spec v5.4, Vol 4, Part E, 7.8.5).
public struct AdvertisingType: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// ADV_IND, 0x00: connectable and scannable undirected.
    public static let connectableUndirected = AdvertisingType(rawValue: 0x00)
    /// ADV_SCAN_IND, 0x02: scannable undirected.
    public static let scannableUndirected = AdvertisingType(rawValue: 0x02)
    /// ADV_NONCONN_IND, 0x03: non-connectable undirected, what an iBeacon sends.
    public static let nonConnectableUndirected = AdvertisingType(rawValue: 0x03)
}

/// Advertising or scan interval in the controller's unit of 0.625 ms.
public struct LEInterval: Sendable, Hashable, CustomStringConvertible {
    public var units: UInt16
    public init(units: UInt16) { self.units = units }

    /// The nearest interval to `milliseconds`, or nil when it falls outside what HCI can carry.
    public init?(milliseconds: Double) {
        let units = (milliseconds / 0.625).rounded()
        guard units >= 1, units <= Double(UInt16.max) else { return nil }
        self.units = UInt16(units)
    }

    public var milliseconds: Double { Double(units) * 0.625 }
    public var description: String {
        let ms = milliseconds
        return ms == ms.rounded() ? "\(Int(ms)) ms" : "\(ms) ms"
    }

    /// Parses "100ms", "100 ms", "1s", "0.5s" or a bare number of milliseconds.
    public static func parse(_ text: String) -> LEInterval? {
        let trimmed = text.trimmingCharacters(in: " ").lowercased()
        if trimmed.hasSuffix("ms"), let value = Double(trimmed.dropLast(2).trimmingCharacters(in: " ")) {
            return LEInterval(milliseconds: value)
        }
        if trimmed.hasSuffix("s"), let value = Double(trimmed.dropLast().trimmingCharacters(in: " ")) {
            return LEInterval(milliseconds: value * 1000)
        }
        return Double(trimmed).flatMap { LEInterval(milliseconds: $0) }
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var slice = Substring(self)
        while slice.first == set { slice = slice.dropFirst() }
        while slice.last == set { slice = slice.dropLast() }
        return String(slice)
    }
}

/// Builders for the LE commands a beacon and a scanner need. Each cites its parameter layout.
public enum LECommand {
    /// HCI_Set_Event_Mask with the default events plus LE Meta (bit 61), which controllers
    /// leave off after Reset (Vol 4, Part E, 7.3.1).
    public static func setEventMaskWithLEMeta() -> HCICommand {
        let mask: UInt64 = 0x0000_1FFF_FFFF_FFFF | (1 << 61)
        return HCICommand(opcode: .setEventMask, parameters: littleEndian(mask, bytes: 8))
    }

    /// HCI_LE_Set_Event_Mask enabling the LE Advertising Report (bit 1) and the LE Extended
    /// Advertising Report (bit 12) subevents besides the default ones (Vol 4, Part E, 7.8.1).
    public static func setLEEventMask() -> HCICommand {
        let mask: UInt64 = 0x0000_0000_0000_001F | (1 << 12)
        return HCICommand(opcode: .leSetEventMask, parameters: littleEndian(mask, bytes: 8))
    }

    /// HCI_LE_Set_Advertising_Parameters (Vol 4, Part E, 7.8.5): min and max interval, type,
    /// own address type public, no peer, all three channels (37, 38, 39), no filter.
    public static func setAdvertisingParameters(interval: LEInterval,
                                                type: AdvertisingType = .nonConnectableUndirected) -> HCICommand {
        HCICommand(opcode: .leSetAdvertisingParameters,
                   parameters: AdvertisingCommands.setParameters(intervalUnits: interval.units, type: type.rawValue))
    }

    /// HCI_LE_Set_Advertising_Data (Vol 4, Part E, 7.8.7): a length byte, then 31 bytes of
    /// advertising data padded with zeros.
    public static func setAdvertisingData(_ data: [UInt8]) -> HCICommand {
        precondition(data.count <= AdvertisingCommands.maximumDataLength, "legacy advertising data is at most 31 bytes")
        return HCICommand(opcode: .leSetAdvertisingData, parameters: AdvertisingCommands.setData(data))
    }

    /// HCI_LE_Set_Advertising_Enable (Vol 4, Part E, 7.8.9).
    public static func setAdvertisingEnable(_ enabled: Bool) -> HCICommand {
        HCICommand(opcode: .leSetAdvertisingEnable, parameters: AdvertisingCommands.setEnable(enabled))
    }

    /// HCI_LE_Set_Scan_Parameters (Vol 4, Part E, 7.8.10): type (0 passive, 1 active), interval,
    /// window, own address type public, accept all advertisers.
    public static func setScanParameters(active: Bool, interval: LEInterval, window: LEInterval) -> HCICommand {
        var parameters: [UInt8] = [active ? 1 : 0]
        parameters += littleEndian(UInt64(interval.units), bytes: 2) + littleEndian(UInt64(window.units), bytes: 2)
        parameters += [0x00, 0x00]
        return HCICommand(opcode: .leSetScanParameters, parameters: parameters)
    }

    /// HCI_LE_Set_Scan_Enable (Vol 4, Part E, 7.8.11). Duplicate filtering stays off by default
    /// so that every packet, and so every RSSI reading, reaches the host.
    public static func setScanEnable(_ enabled: Bool, filterDuplicates: Bool = false) -> HCICommand {
        HCICommand(opcode: .leSetScanEnable, parameters: [enabled ? 1 : 0, filterDuplicates ? 1 : 0])
    }

    static func littleEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
