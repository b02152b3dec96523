import Foundation

/// Everything `proxima encode` prints, built from a frame and the flags.
public struct IBeaconAdvertisement: Sendable, Hashable, Codable {
    public var frame: IBeaconFrame
    public var flags: UInt8

    public init(frame: IBeaconFrame, flags: UInt8 = AdvertisingFlags.airLocate) {
        self.frame = frame
        self.flags = flags
    }

    /// The 30 AD bytes.
    public var advertisingData: [UInt8] { frame.advertisingData(flags: flags) }

    /// LE Set Advertising Data's parameters (OGF 0x08, OCF 0x0008): the significant length,
    /// then 31 bytes of data, zero-padded (Core Specification Vol 4, Part E, 7.8.7).
    public var setAdvertisingDataParameters: [UInt8] { AdvertisingCommands.setData(advertisingData) }

    /// LE Set Advertising Parameters (OCF 0x0006, 7.8.5) for 100 ms, ADV_NONCONN_IND.
    public static let setAdvertisingParametersParameters: [UInt8] = AdvertisingCommands.setParameters()

    /// The three commands of the Raspberry Pi recipe, for `hcitool`, with `device` shell-quoted.
    public func hcitoolCommands(device: String = "hci0") -> [String] {
        AdvertisingCommands.hcitoolRecipe(advertisingData: advertisingData, device: device)
    }

    enum CodingKeys: String, CodingKey { case uuid, major, minor, measuredPower, flags, advertisingData }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(frame: try IBeaconFrame(from: decoder), flags: try container.decode(UInt8.self, forKey: .flags))
    }

    /// `{"uuid", "major", "minor", "measuredPower", "flags", "advertisingData": hex}`.
    public func encode(to encoder: any Encoder) throws {
        try frame.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(flags, forKey: .flags)
        try container.encode(Hex.string(advertisingData), forKey: .advertisingData)
    }
}

extension AdvertisingFlags {
    /// Parses a flags byte as typed: `0x1a`, `0x06`, `1A`, `6` (hexadecimal, with or without 0x).
    public static func parse(_ text: String) throws(IdentityInputError) -> UInt8 {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard !digits.isEmpty, digits.count <= 2, let value = UInt8(digits, radix: 16) else {
            throw IdentityInputError(field: "flags", value: text,
                                     reason: "flags is one byte in hexadecimal, e.g. 0x1a (as the book and AirLocate) or 0x06")
        }
        return value
    }
}
