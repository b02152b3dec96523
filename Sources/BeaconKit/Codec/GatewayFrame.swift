/// A frame as an April Brother BLE gateway forwards it: advertisement type (1 byte), the
/// advertiser's MAC (6 bytes, written order), RSSI (int8), then the advertising data.
/// Layout from April Brother's "User Guide For AB BLE Gateway V4".
public struct GatewayFrame: Sendable, Hashable {
    public var advertisementType: UInt8
    public var address: BluetoothAddress
    /// dBm; nil for 127, the HCI "not available" value the gateway passes through.
    public var rssi: Int8?
    public var advertisingData: [UInt8]

    public static let headerLength = 8

    public init(advertisementType: UInt8, address: BluetoothAddress, rssi: Int8?, advertisingData: [UInt8]) {
        self.advertisementType = advertisementType
        self.address = address
        self.rssi = rssi
        self.advertisingData = advertisingData
    }

    /// Splits the header from the advertising data. The advertisement type is the legacy event
    /// type, so it is 0…4.
    public init(bytes: [UInt8]) throws(DecodeError) {
        guard bytes.count >= Self.headerLength else {
            throw DecodeError(field: "gateway frame header", offset: bytes.count,
                              expected: "8 bytes (type, MAC 6, RSSI)", found: "\(bytes.count) byte\(bytes.count == 1 ? "" : "s")")
        }
        guard bytes[0] <= 4 else {
            throw DecodeError(field: "gateway advertisement type", offset: 0,
                              expected: "0x00-0x04 (ADV_IND … SCAN_RSP)", found: hexByte(bytes[0]))
        }
        var address: UInt64 = 0
        for byte in bytes[1..<7] { address = address << 8 | UInt64(byte) }
        let rssi = Int8(bitPattern: bytes[7])
        self.init(advertisementType: bytes[0], address: BluetoothAddress(rawValue: address),
                  rssi: rssi == AdvertisingReport.rssiNotAvailable ? nil : rssi,
                  advertisingData: Array(bytes[Self.headerLength...]))
    }

    public var bytes: [UInt8] {
        [advertisementType] + address.hciBytes.reversed() + [UInt8(bitPattern: rssi ?? AdvertisingReport.rssiNotAvailable)]
            + advertisingData
    }
}
