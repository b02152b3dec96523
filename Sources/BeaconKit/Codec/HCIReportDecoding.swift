extension AdvertisingReport {
    /// HCI packet and event numbers needed to read advertising reports
    /// (Core Specification Vol 4, Part A 2 and Part E 7.7).
    public struct Code: RawRepresentable, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// H4 packet indicator 0x04: HCI Event packet (Vol 4, Part A, 2).
        public static let h4EventPacket = Code(rawValue: 0x04)
        /// Event code 0x3E: LE Meta event (Vol 4, Part E, 7.7.65).
        public static let leMetaEvent = Code(rawValue: 0x3E)
        /// Subevent 0x02: LE Advertising Report (7.7.65.2).
        public static let advertisingReport = Code(rawValue: 0x02)
        /// Subevent 0x0D: LE Extended Advertising Report (7.7.65.13).
        public static let extendedAdvertisingReport = Code(rawValue: 0x0D)
    }

    /// RSSI value 127 (0x7F): "RSSI is not available" (7.7.65.2).
    public static let rssiNotAvailable: Int8 = 127
    /// At most 31 bytes of data fit in a legacy advertising PDU (Vol 6, Part B, 2.3.1).
    public static let legacyDataLimit = 31

    /// Decodes a whole HCI event, with or without the leading H4 byte 0x04. LE Meta subevents
    /// 0x02 and 0x0D are read; any other event or subevent is an error naming it. Offsets in
    /// errors count from the first byte given.
    public static func decode(hciEvent: [UInt8]) throws(DecodeError) -> [AdvertisingReport] {
        try hciEvent.withDecodingBuffer { (buffer) throws(DecodeError) -> [AdvertisingReport] in
            var reports: [AdvertisingReport] = []
            try HCIReportDecoder.reports(inEvent: buffer) { (header, range) throws(DecodeError) in
                reports.append(AdvertisingReport(header: header, data: buffer.bytes(range)))
            }
            return reports
        }
    }

    /// Decodes the parameters of an LE Meta event, starting at the subevent code. Offsets in
    /// errors count from the slice's start.
    public static func decode(leMetaParameters: ArraySlice<UInt8>) throws(DecodeError) -> [AdvertisingReport] {
        try leMetaParameters.withDecodingBuffer { (buffer) throws(DecodeError) -> [AdvertisingReport] in
            var reports: [AdvertisingReport] = []
            try HCIReportDecoder.reports(inLEMeta: buffer, baseOffset: 0) { (header, range) throws(DecodeError) in
                reports.append(AdvertisingReport(header: header, data: buffer.bytes(range)))
            }
            return reports
        }
    }

    /// The allocation-free entry point: calls `body` with each report's header and the range of
    /// its data in `hciEvent` (with or without the H4 byte).
    public static func forEachReport(inHCIEvent hciEvent: UnsafeRawBufferPointer,
                                     _ body: (ReportHeader, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        try HCIReportDecoder.reports(inEvent: hciEvent, body)
    }

    public init(header: ReportHeader, data: [UInt8]) {
        self.init(kind: header.kind, addressType: header.addressType, address: header.address,
                  rssi: header.rssi, data: data)
    }

    public var header: ReportHeader {
        ReportHeader(kind: kind, addressType: addressType, address: address, rssi: rssi)
    }

    /// The data is complete: a legacy report, or an extended one whose data status bits
    /// (5–6 of Event_Type) say "complete". Incomplete data is not decoded as beacon frames.
    public var isDataComplete: Bool { header.isDataComplete }
}

/// Everything of an advertising report except its data.
public struct ReportHeader: Sendable, Hashable {
    public var kind: AdvertisingReport.Kind
    public var addressType: UInt8
    public var address: BluetoothAddress
    /// dBm, nil when the controller sent 127.
    public var rssi: Int8?

    public init(kind: AdvertisingReport.Kind, addressType: UInt8, address: BluetoothAddress, rssi: Int8?) {
        self.kind = kind
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
    }

    public var isDataComplete: Bool {
        if case .extended(let properties) = kind { return properties & 0x0060 == 0 }
        return true
    }
}

extension BeaconFrame {
    /// The allocation-free path from an HCI event to beacon frames: every beacon frame of
    /// every report, with the report's header. Reports with incomplete extended data are skipped.
    public static func forEachFrame(inHCIEvent hciEvent: UnsafeRawBufferPointer,
                                    _ body: (ReportHeader, BeaconFrame) -> Void) throws(DecodeError) {
        try HCIReportDecoder.reports(inEvent: hciEvent) { (header, range) throws(DecodeError) in
            guard header.isDataComplete else { return }
            try FrameDecoder.frames(inAdvertisingData: UnsafeRawBufferPointer(rebasing: hciEvent[range]),
                                    baseOffset: range.lowerBound) { body(header, $0) }
        }
    }
}

enum HCIReportDecoder {
    @inline(__always)
    static func reports(inEvent buffer: UnsafeRawBufferPointer,
                        _ body: (ReportHeader, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        guard buffer.count >= 1 else {
            throw DecodeError(field: "HCI event code", offset: 0, expected: "0x3E (LE Meta event), optionally after H4 byte 0x04", found: "empty input")
        }
        var position = 0
        if buffer[0] == AdvertisingReport.Code.h4EventPacket.rawValue {
            position = 1
        }
        guard position < buffer.count else {
            throw DecodeError(field: "HCI event code", offset: position, expected: "0x3E (LE Meta event)", found: "end of data")
        }
        let eventCode = buffer[position]
        guard eventCode == AdvertisingReport.Code.leMetaEvent.rawValue else {
            throw DecodeError(field: "HCI event code", offset: position, expected: "0x3E (LE Meta event)",
                              found: "\(hexByte(eventCode)) (\(eventName(eventCode)))")
        }
        guard position + 1 < buffer.count else {
            throw DecodeError(field: "HCI event parameter length", offset: position + 1, expected: "a length byte", found: "end of data")
        }
        let declared = Int(buffer[position + 1])
        let parameters = position + 2
        guard declared == buffer.count - parameters else {
            throw DecodeError(field: "HCI event parameter length", offset: position + 1,
                              expected: "\(buffer.count - parameters) (the parameter bytes present)", found: "\(declared)")
        }
        try reports(inLEMeta: UnsafeRawBufferPointer(rebasing: buffer[parameters...]), baseOffset: parameters, body)
    }

    /// `buffer` starts at the subevent code; ranges handed to `body` are shifted by `baseOffset`
    /// so that they index the caller's whole buffer.
    @inline(__always)
    static func reports(inLEMeta buffer: UnsafeRawBufferPointer, baseOffset: Int,
                        _ body: (ReportHeader, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        guard buffer.count >= 1 else {
            throw DecodeError(field: "LE Meta subevent code", offset: baseOffset, expected: "0x02 or 0x0D", found: "end of data")
        }
        let subevent = buffer[0]
        let extended: Bool
        switch subevent {
        case AdvertisingReport.Code.advertisingReport.rawValue: extended = false
        case AdvertisingReport.Code.extendedAdvertisingReport.rawValue: extended = true
        default:
            throw DecodeError(field: "LE Meta subevent code", offset: baseOffset,
                              expected: "0x02 (LE Advertising Report) or 0x0D (LE Extended Advertising Report)",
                              found: "\(hexByte(subevent)) (\(subeventName(subevent)))")
        }
        guard buffer.count >= 2 else {
            throw DecodeError(field: "Num_Reports", offset: baseOffset + 1, expected: "a count byte", found: "end of data")
        }
        let count = Int(buffer[1])
        let allowed = extended ? 1...10 : 1...25
        guard allowed.contains(count) else {
            throw DecodeError(field: "Num_Reports", offset: baseOffset + 1,
                              expected: "\(allowed.lowerBound)…\(allowed.upperBound)", found: "\(count)")
        }
        var position = 2
        for index in 0..<count {
            position = extended
                ? try extendedReport(buffer, at: position, index: index, baseOffset: baseOffset, body)
                : try legacyReport(buffer, at: position, index: index, baseOffset: baseOffset, body)
        }
        guard position == buffer.count else {
            throw DecodeError(field: "LE Meta parameters", offset: baseOffset + position,
                              expected: "the end after \(count) report\(count == 1 ? "" : "s")",
                              found: "\(buffer.count - position) more byte\(buffer.count - position == 1 ? "" : "s")")
        }
    }

    /// `event type 1, address type 1, address 6, data length 1, data, RSSI 1` (7.7.65.2).
    @inline(__always)
    static func legacyReport(_ buffer: UnsafeRawBufferPointer, at start: Int, index: Int, baseOffset: Int,
                             _ body: (ReportHeader, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) -> Int {
        guard buffer.count - start >= 10 else {
            throw truncated("report \(index + 1) header", at: buffer.count, baseOffset: baseOffset,
                            expected: "10 bytes (event type, address type, address, data length)", left: buffer.count - start)
        }
        let eventType = buffer[start]
        guard eventType <= 4 else {
            throw DecodeError(field: "report \(index + 1) event type", offset: baseOffset + start,
                              expected: "0x00-0x04 (ADV_IND, ADV_DIRECT_IND, ADV_SCAN_IND, ADV_NONCONN_IND, SCAN_RSP)",
                              found: hexByte(eventType))
        }
        let length = Int(buffer[start + 8])
        guard length <= AdvertisingReport.legacyDataLimit else {
            throw DecodeError(field: "report \(index + 1) data length", offset: baseOffset + start + 8,
                              expected: "0…31", found: "\(length)")
        }
        let dataStart = start + 9
        guard buffer.count - dataStart >= length + 1 else {
            throw truncated("report \(index + 1) data and RSSI", at: buffer.count, baseOffset: baseOffset,
                            expected: "\(length + 1) bytes", left: buffer.count - dataStart)
        }
        let rawRSSI = buffer.int8(at: dataStart + length)
        let header = ReportHeader(kind: .legacy(eventType: eventType), addressType: buffer[start + 1],
                                  address: buffer.bluetoothAddress(at: start + 2),
                                  rssi: rawRSSI == AdvertisingReport.rssiNotAvailable ? nil : rawRSSI)
        try body(header, (baseOffset + dataStart)..<(baseOffset + dataStart + length))
        return dataStart + length + 1
    }

    /// `event type 2, address type 1, address 6, primary PHY 1, secondary PHY 1, SID 1,
    /// TX power 1, RSSI 1, periodic interval 2, direct address type 1, direct address 6,
    /// data length 1, data` (7.7.65.13).
    @inline(__always)
    static func extendedReport(_ buffer: UnsafeRawBufferPointer, at start: Int, index: Int, baseOffset: Int,
                               _ body: (ReportHeader, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) -> Int {
        guard buffer.count - start >= 24 else {
            throw truncated("extended report \(index + 1) header", at: buffer.count, baseOffset: baseOffset,
                            expected: "24 bytes before the data", left: buffer.count - start)
        }
        let length = Int(buffer[start + 23])
        let dataStart = start + 24
        guard buffer.count - dataStart >= length else {
            throw truncated("extended report \(index + 1) data", at: buffer.count, baseOffset: baseOffset,
                            expected: "\(length) bytes", left: buffer.count - dataStart)
        }
        let rawRSSI = buffer.int8(at: start + 13)
        let header = ReportHeader(kind: .extended(eventProperties: buffer.uint16LittleEndian(at: start)),
                                  addressType: buffer[start + 2], address: buffer.bluetoothAddress(at: start + 3),
                                  rssi: rawRSSI == AdvertisingReport.rssiNotAvailable ? nil : rawRSSI)
        try body(header, (baseOffset + dataStart)..<(baseOffset + dataStart + length))
        return dataStart + length
    }

    static func truncated(_ field: String, at end: Int, baseOffset: Int, expected: String, left: Int) -> DecodeError {
        DecodeError(field: field, offset: baseOffset + end, expected: expected,
                    found: "\(left) byte\(left == 1 ? "" : "s") left")
    }

    static func eventName(_ code: UInt8) -> String {
        switch code {
        case 0x03: "Connection Complete"
        case 0x05: "Disconnection Complete"
        case 0x0E: "Command Complete"
        case 0x0F: "Command Status"
        case 0x13: "Number Of Completed Packets"
        case 0xFF: "Vendor Specific"
        default: "another HCI event"
        }
    }

    static func subeventName(_ code: UInt8) -> String {
        switch code {
        case 0x01: "LE Connection Complete"
        case 0x03: "LE Connection Update Complete"
        case 0x0A: "LE Enhanced Connection Complete"
        case 0x0B: "LE Directed Advertising Report"
        case 0x0E: "LE Periodic Advertising Sync Established"
        case 0x0F: "LE Periodic Advertising Report"
        case 0x12: "LE Advertising Set Terminated"
        case 0x13: "LE Scan Request Received"
        default: "another LE subevent"
        }
    }
}

extension AdvertisingReport {
    /// Encodes an LE Advertising Report event `3E len 02 n …` without the H4 byte. RSSI nil
    /// becomes 127. An extended report is given the legacy event type its properties match.
    /// Callers keep to 1…25 reports of at most 31 data bytes and 253 parameter bytes in all;
    /// `legacyEventPackets` splits larger batches.
    public static func legacyEventPacket(_ reports: [AdvertisingReport]) -> [UInt8] {
        precondition((1...25).contains(reports.count), "an LE Advertising Report event carries 1…25 reports")
        var parameters: [UInt8] = [Code.advertisingReport.rawValue, UInt8(reports.count)]
        for report in reports {
            precondition(report.data.count <= legacyDataLimit, "legacy advertising data is at most 31 bytes")
            parameters.append(report.legacyEventType)
            parameters.append(report.addressType)
            parameters += report.address.hciBytes
            parameters.append(UInt8(report.data.count))
            parameters += report.data
            parameters.append(UInt8(bitPattern: report.rssi ?? rssiNotAvailable))
        }
        precondition(parameters.count <= 255, "an HCI event holds at most 255 parameter bytes")
        return [Code.leMetaEvent.rawValue, UInt8(parameters.count)] + parameters
    }

    /// As many LE Advertising Report events as the reports need.
    public static func legacyEventPackets(_ reports: [AdvertisingReport]) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var batch: [AdvertisingReport] = []
        var size = 2
        for report in reports {
            let reportSize = 10 + report.data.count
            if !batch.isEmpty && (batch.count == 25 || size + reportSize > 255) {
                packets.append(legacyEventPacket(batch))
                batch = []
                size = 2
            }
            batch.append(report)
            size += reportSize
        }
        if !batch.isEmpty { packets.append(legacyEventPacket(batch)) }
        return packets
    }

    /// The legacy event type (0 ADV_IND … 4 SCAN_RSP) of this report.
    public var legacyEventType: UInt8 {
        switch kind {
        case .legacy(let eventType): return eventType
        case .extended(let properties):
            let connectable = properties & 0x01 != 0, scannable = properties & 0x02 != 0
            if properties & 0x08 != 0 { return 4 }
            if properties & 0x04 != 0 { return 1 }
            if connectable { return 0 }
            return scannable ? 2 : 3
        }
    }
}
