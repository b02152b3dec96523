import BeaconKit

/// Turns LE link-layer advertising packets, as a sniffer captures them under
/// LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR (256), into the LE Advertising Report a scanning
/// controller would have sent for them.
enum LELinkLayer {
    /// The access address of every advertising channel packet (Core Spec v5.4, Vol 6, Part B, 2.1.2).
    static let advertisingAccessAddress: UInt32 = 0x8E89_BED6

    /// Pseudo-header flags (tcpdump.org, LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR).
    static let signalPowerValid: UInt16 = 0x0002
    static let crcChecked: UInt16 = 0x0400
    static let crcValid: UInt16 = 0x0800

    /// Advertising PDU type (Vol 6, Part B, 2.3) to legacy report event type (Vol 4, Part E,
    /// 7.7.65.2): ADV_IND 0→0, ADV_DIRECT_IND 1→1, ADV_NONCONN_IND 2→3, SCAN_RSP 4→4,
    /// ADV_SCAN_IND 6→2. Other PDUs (requests, CONNECT_IND, extended) are not reports.
    static let reportEventType: [UInt8: UInt8] = [0: 0, 1: 1, 2: 3, 4: 4, 6: 2]

    /// The H4 event packet for one record, or nil when the record is not a legacy advertisement
    /// with a good CRC.
    static func advertisingReportEvent(_ record: ArraySlice<UInt8>, offset: Int, field: String) throws(DecodeError) -> HCIPacket? {
        let bytes = Array(record)
        // 10-byte pseudo-header, 4-byte access address, 2-byte PDU header, 3-byte CRC.
        guard bytes.count >= 19 else {
            throw DecodeError(field: "capture \(field) LE link-layer packet", offset: offset,
                expected: "at least 19 bytes (pseudo-header 10, access address 4, PDU header 2, CRC 3)",
                found: "\(bytes.count) bytes")
        }
        let signal = Int8(bitPattern: bytes[1])
        let flags = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        if flags & crcChecked != 0 && flags & crcValid == 0 { return nil }
        let accessAddress = bytes[10..<14].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard accessAddress == advertisingAccessAddress else { return nil }
        let header = bytes[14]
        let length = Int(bytes[15])
        guard 16 + length + 3 == bytes.count else {
            throw DecodeError(field: "capture \(field) advertising PDU length", offset: offset + 15,
                expected: "\(bytes.count - 19) (the bytes between the PDU header and the CRC)", found: "\(length)")
        }
        guard let eventType = reportEventType[header & 0x0F], length >= 6 else { return nil }
        let addressType: UInt8 = header & 0x40 != 0 ? 1 : 0
        let advertiserAddress = Array(bytes[16..<22])
        // ADV_DIRECT_IND carries a target address, not data.
        let data = eventType == 1 ? [] : Array(bytes[22..<16 + length])
        guard data.count <= 31 else { return nil }
        let rssi: UInt8 = flags & signalPowerValid != 0 ? UInt8(bitPattern: signal) : 127
        let report = AdvertisingReport(kind: .legacy(eventType: eventType), addressType: addressType,
                                       address: BluetoothAddress(hciBytes: advertiserAddress),
                                       rssi: rssi == 127 ? nil : Int8(bitPattern: rssi), data: data)
        let event = AdvertisingReport.legacyEventPacket([report])
        return HCIPacket(type: .event, body: event)
    }
}
