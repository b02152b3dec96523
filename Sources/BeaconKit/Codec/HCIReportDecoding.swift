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
                reports.append(AdvertisingReport(header: header, data: buffer.getBytes(range)))
            }
            return reports
        }
    }

    /// Decodes the parameters of an LE Meta event, starting at the subevent code. Offsets in
    /// errors count from the slice's start.
    public static func decode(leMetaParameters: ArraySlice<UInt8>) throws(DecodeError) -> [AdvertisingReport] {
        try leMetaParameters.withDecodingBuffer { (buffer) throws(DecodeError) -> [AdvertisingReport] in
            var reports: [AdvertisingReport] = []
            try HCIReportDecoder.reports(inLEMeta: buffer, from: 0) { (header, range) throws(DecodeError) in
                reports.append(AdvertisingReport(header: header, data: buffer.getBytes(range)))
            }
            return reports
        }
    }

    /// The allocation-free entry point: calls `body` with each report's header and the range of
    /// its data in `hciEvent` (with or without the H4 byte).
    @inlinable
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
    /// The address as a 48-bit number; `address` wraps it.
    public var addressValue: UInt64
    /// dBm, nil when the controller sent 127.
    public var rssi: Int8?

    @inlinable
    public init(kind: AdvertisingReport.Kind, addressType: UInt8, addressValue: UInt64, rssi: Int8?) {
        self.kind = kind
        self.addressType = addressType
        self.addressValue = addressValue
        self.rssi = rssi
    }

    public init(kind: AdvertisingReport.Kind, addressType: UInt8, address: BluetoothAddress, rssi: Int8?) {
        self.init(kind: kind, addressType: addressType, addressValue: address.rawValue, rssi: rssi)
    }

    public var address: BluetoothAddress { BluetoothAddress(rawValue: addressValue) }

    @inlinable
    public var isDataComplete: Bool {
        if case .extended(let properties) = kind { return properties & 0x0060 == 0 }
        return true
    }
}

/// The beacon frames of one HCI advertising report event, read as `LocatedFrame.scan(hciEvent:)`
/// reads it, and the errors of reports whose data broke the AD rules.
public struct HCIEventFrames: Sendable, Hashable {
    public struct Found: Sendable, Hashable {
        public var header: ReportHeader
        public var frame: BeaconFrame
    }

    public var frames: [Found] = []
    /// One error per report whose advertising data is malformed, offsets counted in the event.
    public var malformedReports: [DecodeError] = []

    /// Throws only when the event itself is broken; see `LocatedFrame.scan(hciEvent:)`.
    public init(hciEvent: [UInt8]) throws(DecodeError) {
        var found = HCIEventFrames()
        try hciEvent.withDecodingBuffer { (buffer) throws(DecodeError) in
            try LocatedFrame.scan(hciEvent: buffer, malformedReport: { found.malformedReports.append($0) }) { header, located in
                found.frames.append(Found(header: header, frame: located.frame(in: buffer)))
            }
        }
        self = found
    }

    init() {}
}

extension BeaconFrame {
    /// Every beacon frame of every report of an HCI event, with the report's header. Reports
    /// with incomplete extended data are skipped. `LocatedFrame.scan(hciEvent:)` is the same
    /// without building the values.
    public static func forEachFrame(inHCIEvent hciEvent: UnsafeRawBufferPointer,
                                    _ body: (ReportHeader, BeaconFrame) -> Void) throws(DecodeError) {
        try LocatedFrame.scan(hciEvent: hciEvent) { header, located in body(header, located.frame(in: hciEvent)) }
    }
}

/// Reads HCI advertising report events. Ranges handed on and error offsets index the buffer
/// given. Positions stay within the buffer's count, so arithmetic on them wraps.
@usableFromInline
enum HCIReportDecoder {
    @inlinable @inline(__always)
    static func reports(inEvent buffer: UnsafeRawBufferPointer,
                        _ body: (ReportHeader, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        try reports(inLEMeta: buffer, from: leMetaStart(inEvent: buffer, from: 0, to: buffer.count), body)
    }

    /// The LE Meta parameters start at `start` (the subevent code) and run to the buffer's end.
    @inlinable @inline(__always)
    static func reports(inLEMeta buffer: UnsafeRawBufferPointer, from start: Int,
                        _ body: (ReportHeader, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        let end = buffer.count
        let (first, count, extended) = try firstReport(buffer, leMetaAt: start, end: end)
        var position = first
        for index in 0..<count {
            let (header, data, next) = try report(buffer, at: position, end: end, index: index, extended: extended)
            try body(header, data)
            position = next
        }
        try checkEnd(at: position, end: end, reports: count)
    }

    /// Checks the event header (H4 byte optional, LE Meta event code, parameter length) of the
    /// event in `start..<count` and returns where the LE Meta parameters start.
    @inlinable @inline(__always)
    static func leMetaStart(inEvent buffer: UnsafeRawBufferPointer, from start: Int, to count: Int) throws(DecodeError) -> Int {
        guard count > start else {
            throw DecodeFailure.missing("HCI event code", at: start, expected: "0x3E (LE Meta event), optionally after H4 byte 0x04", present: 0)
        }
        let position = buffer[start] == Number.h4Event ? start &+ 1 : start
        guard count &- position >= 2 else {
            throw DecodeFailure.missing(position < count ? "HCI event parameter length" : "HCI event code", at: count,
                                        expected: "an event code and a parameter length", present: 0)
        }
        let eventCode = buffer[position]
        guard eventCode == Number.leMeta else {
            throw DecodeFailure.eventCode(at: position, found: eventCode)
        }
        let declared = Int(buffer[position &+ 1])
        let parameters = position &+ 2
        guard declared == count &- parameters else {
            throw DecodeFailure.parameterLength(at: position &+ 1, present: count &- parameters, declared: declared)
        }
        return parameters
    }

    /// Checks the subevent and the report count; returns where the first report starts.
    @inlinable @inline(__always)
    static func firstReport(_ buffer: UnsafeRawBufferPointer, leMetaAt start: Int,
                            end: Int) throws(DecodeError) -> (position: Int, count: Int, extended: Bool) {
        guard end &- start >= 2 else {
            throw DecodeFailure.missing(end > start ? "Num_Reports" : "LE Meta subevent code", at: end,
                                        expected: "a subevent code and a report count", present: 0)
        }
        let subevent = buffer[start]
        let extended: Bool
        if subevent == Number.advertisingReport {
            extended = false
        } else if subevent == Number.extendedAdvertisingReport {
            extended = true
        } else {
            throw DecodeFailure.subevent(at: start, found: subevent)
        }
        let reportCount = Int(buffer[start &+ 1])
        let limit = extended ? 10 : 25
        guard reportCount >= 1 && reportCount <= limit else {
            throw DecodeFailure.numReports(at: start &+ 1, limit: limit, found: reportCount)
        }
        return (start &+ 2, reportCount, extended)
    }

    @inlinable @inline(__always)
    static func checkEnd(at position: Int, end: Int, reports: Int) throws(DecodeError) {
        guard position == end else {
            throw DecodeFailure.trailing(at: position, reports: reports, extra: end &- position)
        }
    }

    /// One report: its header, the range of its data, and where the next report starts.
    @inlinable @inline(__always)
    static func report(_ buffer: UnsafeRawBufferPointer, at start: Int, end: Int, index: Int,
                       extended: Bool) throws(DecodeError) -> (header: ReportHeader, data: Range<Int>, next: Int) {
        extended ? try extendedReport(buffer, at: start, end: end, index: index) : try legacyReport(buffer, at: start, end: end, index: index)
    }

    /// `event type 1, address type 1, address 6, data length 1, data, RSSI 1` (7.7.65.2).
    @inlinable @inline(__always)
    static func legacyReport(_ buffer: UnsafeRawBufferPointer, at start: Int, end: Int,
                             index: Int) throws(DecodeError) -> (header: ReportHeader, data: Range<Int>, next: Int) {
        guard end &- start >= 10 else {
            throw DecodeFailure.report(index, "header", at: end,
                                        expected: "10 bytes (event type, address type, address, data length, RSSI)", present: end &- start)
        }
        let eventType = buffer[start]
        let length = Int(buffer[start &+ 8])
        // One branch for both range checks on the way in; the cold path says which failed.
        guard (eventType <= 4) && (length <= Number.legacyDataLimit) else {
            guard eventType <= 4 else {
                throw DecodeFailure.reportValue(index, "event type", at: start,
                                                expected: "0x00-0x04 (ADV_IND, ADV_DIRECT_IND, ADV_SCAN_IND, ADV_NONCONN_IND, SCAN_RSP)",
                                                found: eventType)
            }
            throw DecodeFailure.reportCount(index, "data length", at: start &+ 8, expected: "0…31", found: length)
        }
        let dataStart = start &+ 9
        guard end &- dataStart > length else {
            throw DecodeFailure.reportBytes(index, "data and RSSI", at: end, needed: length &+ 1, present: end &- dataStart)
        }
        let rawRSSI = buffer.getInt8(at: dataStart &+ length)
        let header = ReportHeader(kind: .legacy(eventType: eventType), addressType: buffer[start &+ 1],
                                  addressValue: buffer.getAddress(at: start &+ 2),
                                  rssi: rawRSSI == Number.rssiNotAvailable ? nil : rawRSSI)
        return (header, Range(uncheckedBounds: (dataStart, dataStart &+ length)), dataStart &+ length &+ 1)
    }

    /// `event type 2, address type 1, address 6, primary PHY 1, secondary PHY 1, SID 1,
    /// TX power 1, RSSI 1, periodic interval 2, direct address type 1, direct address 6,
    /// data length 1, data` (7.7.65.13).
    @inlinable @inline(__always)
    static func extendedReport(_ buffer: UnsafeRawBufferPointer, at start: Int, end: Int,
                               index: Int) throws(DecodeError) -> (header: ReportHeader, data: Range<Int>, next: Int) {
        guard end &- start >= 24 else {
            throw DecodeFailure.report(index, "header", extended: true, at: end, expected: "24 bytes before the data",
                                        present: end &- start)
        }
        let length = Int(buffer[start &+ 23])
        let dataStart = start &+ 24
        guard end &- dataStart >= length else {
            throw DecodeFailure.reportBytes(index, "data", extended: true, at: end, needed: length, present: end &- dataStart)
        }
        let rawRSSI = buffer.getInt8(at: start &+ 13)
        let header = ReportHeader(kind: .extended(eventProperties: buffer.getUInt16LittleEndian(at: start)),
                                  addressType: buffer[start &+ 2], addressValue: buffer.getAddress(at: start &+ 3),
                                  rssi: rawRSSI == Number.rssiNotAvailable ? nil : rawRSSI)
        return (header, Range(uncheckedBounds: (dataStart, dataStart &+ length)), dataStart &+ length)
    }

    @usableFromInline
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

    @usableFromInline
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
