/// One report from an HCI LE Advertising Report or LE Extended Advertising Report event:
/// who advertised, how loud it was, and the advertising data it carried.
public struct AdvertisingReport: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Legacy report event type (Core Spec Vol 4 Part E 7.7.65.2): 0 ADV_IND,
        /// 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
        case legacy(eventType: UInt8)
        /// Extended report Event_Type bit field (Core Spec Vol 4 Part E 7.7.65.13).
        case extended(eventProperties: UInt16)
    }

    public var kind: Kind
    public var addressType: UInt8
    public var address: BluetoothAddress
    /// dBm, or nil when the controller sent 127 ("RSSI not available").
    public var rssi: Int8?
    public var data: [UInt8]

    public init(kind: Kind, addressType: UInt8, address: BluetoothAddress, rssi: Int8?, data: [UInt8]) {
        self.kind = kind
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.data = data
    }
}
