/// A beacon frame found in a buffer: its format and where its fields are. The scanner has
/// checked it completely, so reading it cannot fail. Scanning allocates nothing; `frame(in:)`
/// then builds the value (which allocates for AltBeacon ids, Eddystone-UID ids and URLs).
public struct LocatedFrame: Sendable, Hashable {
    public enum Format: UInt8, Sendable, Hashable {
        case iBeacon, altBeacon, eddystoneUID, eddystoneURL, eddystoneTLM
    }

    public var format: Format
    /// For an iBeacon, the 21 bytes after `02 15`; for an AltBeacon, the 26 bytes of
    /// manufacturer data; for Eddystone, the service data from the frame type byte on.
    public var range: Range<Int>

    @inlinable
    public init(format: Format, range: Range<Int>) {
        self.format = format
        self.range = range
    }

    /// The iBeacon, read without allocating; nil for the other formats.
    @inlinable @inline(__always)
    public func iBeacon(in buffer: UnsafeRawBufferPointer) -> IBeaconFrame? {
        guard format == .iBeacon else { return nil }
        let payload = range.lowerBound
        return IBeaconFrame(identity: BeaconIdentity(uuid: buffer.getUUID(at: payload),
                                                     major: buffer.getUInt16BigEndian(at: payload &+ 16),
                                                     minor: buffer.getUInt16BigEndian(at: payload &+ 18)),
                            measuredPower: MeasuredPower(buffer.getInt8(at: payload &+ 20)))
    }

    /// The frame as a value. `buffer` must be the one the frame was located in.
    public func frame(in buffer: UnsafeRawBufferPointer) -> BeaconFrame {
        let start = range.lowerBound
        switch format {
        case .iBeacon:
            return .iBeacon(iBeacon(in: buffer)!)
        case .altBeacon:
            return .altBeacon(AltBeaconFrame(companyID: buffer.getUInt16LittleEndian(at: start),
                                             beaconID: buffer.getBytes((start + 4)..<(start + 24)),
                                             referenceRSSI: MeasuredPower(buffer.getInt8(at: start + 24)),
                                             reserved: buffer[start + 25]))
        case .eddystoneUID:
            return .eddystone(.uid(namespace: buffer.getBytes((start + 2)..<(start + 12)),
                                   instance: buffer.getBytes((start + 12)..<(start + 18)),
                                   txPowerAt0m: buffer.getInt8(at: start + 1)))
        case .eddystoneURL:
            return .eddystone(.url(txPowerAt0m: buffer.getInt8(at: start + 1),
                                   url: EddystoneURLCoding.expand(buffer, scheme: start + 2, end: range.upperBound)))
        case .eddystoneTLM:
            let rawTemperature = buffer.getUInt16BigEndian(at: start + 4)
            return .eddystone(.tlm(EddystoneTelemetry(
                batteryMillivolts: buffer.getUInt16BigEndian(at: start + 2),
                temperatureCelsius: rawTemperature == 0x8000 ? nil : Double(Int16(bitPattern: rawTemperature)) / 256,
                advertisingCount: buffer.getUInt32BigEndian(at: start + 6),
                uptimeDeciseconds: buffer.getUInt32BigEndian(at: start + 10))))
        }
    }

    /// Every beacon frame in advertising data, without allocating. Frames before a malformed
    /// structure have been delivered when it throws.
    @inlinable
    public static func scan(advertisingData buffer: UnsafeRawBufferPointer,
                            _ body: (LocatedFrame) -> Void) throws(DecodeError) {
        try FrameScanner.scan(buffer, from: 0, to: buffer.count, body)
    }

    /// Every beacon frame of every report of an HCI LE (Extended) Advertising Report event, with
    /// or without the H4 byte, without allocating. Ranges index `hciEvent`. Reports whose
    /// extended data is incomplete are skipped.
    ///
    /// This is the one reading of a report event into frames (sightings, replays and `decode`
    /// all go through it), and a broken event is handled one way:
    /// - a broken event structure (header, report count, a report's header or lengths) throws:
    ///   no report boundary after it can be trusted;
    /// - advertising data that breaks the AD rules ends its own report: the frames before the
    ///   bad structure were whole and are delivered, `malformedReport` gets the error (offsets
    ///   index `hciEvent`), and the event's other reports are still read.
    @inlinable
    public static func scan(hciEvent buffer: UnsafeRawBufferPointer, malformedReport: (DecodeError) -> Void,
                            _ body: (ReportHeader, LocatedFrame) -> Void) throws(DecodeError) {
        try scanEvent(buffer, from: 0, to: buffer.count, malformedReport: malformedReport, body)
    }

    /// As `scan(hciEvent:malformedReport:_:)`, then throws the first report's error, if any, once
    /// every other report has been read.
    @inlinable
    public static func scan(hciEvent buffer: UnsafeRawBufferPointer,
                            _ body: (ReportHeader, LocatedFrame) -> Void) throws(DecodeError) {
        var firstMalformed: DecodeError?
        try scanEvent(buffer, from: 0, to: buffer.count, malformedReport: { if firstMalformed == nil { firstMalformed = $0 } }, body)
        if let firstMalformed { throw firstMalformed }
    }

    /// Every beacon frame of a run of H4 event packets laid end to end, as a UART or a capture
    /// delivers them (`04 3E len …  04 3E len …`). Every packet must be an LE advertising report
    /// event. Ranges and error offsets index `h4Events`. Returns the number of events.
    @inlinable
    @discardableResult
    public static func scan(h4Events buffer: UnsafeRawBufferPointer,
                            _ body: (ReportHeader, LocatedFrame) -> Void) throws(DecodeError) -> Int {
        var position = 0
        var events = 0
        let count = buffer.count
        // One slot for the whole run, not one per event: the loop stays as tight as it was
        // before broken reports were collected (BENCHMARKS.md, codec).
        var firstMalformed: DecodeError?
        while position < count {
            guard buffer[position] == Number.h4Event else {
                throw DecodeFailure.value("H4 packet type", at: position, expected: "0x04 (HCI event)", found: buffer[position])
            }
            guard count &- position >= 3 else {
                throw DecodeFailure.missing("HCI event header", at: count, expected: "3 bytes (packet type, event code, length)",
                                            present: count &- position)
            }
            let end = position &+ 3 &+ Int(buffer[position &+ 2])
            guard end <= count else {
                throw DecodeFailure.eventParameters(at: count, needed: end &- position &- 3, present: count &- position &- 3)
            }
            // The length byte just set `end`, so only the event code remains to check.
            guard buffer[position &+ 1] == Number.leMeta else {
                throw DecodeFailure.eventCode(at: position &+ 1, found: buffer[position &+ 1])
            }
            try scanParameters(buffer, from: position &+ 3, to: end, malformedReport: { if firstMalformed == nil { firstMalformed = $0 } }, body)
            if let malformed = firstMalformed { throw malformed }
            position = end
            events &+= 1
        }
        return events
    }

    /// One loop over reports and AD structures, without inner closures, so that the whole scan
    /// compiles into the caller.
    @inlinable @inline(__always)
    static func scanEvent(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int, malformedReport: (DecodeError) -> Void,
                          _ body: (ReportHeader, LocatedFrame) -> Void) throws(DecodeError) {
        try scanParameters(buffer, from: HCIReportDecoder.leMetaStart(inEvent: buffer, from: start, to: end), to: end,
                           malformedReport: malformedReport, body)
    }

    /// The LE Meta parameters in `start..<end`, from the subevent code on.
    @inlinable @inline(__always)
    static func scanParameters(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int, malformedReport: (DecodeError) -> Void,
                               _ body: (ReportHeader, LocatedFrame) -> Void) throws(DecodeError) {
        let (first, count, extended) = try HCIReportDecoder.firstReport(buffer, leMetaAt: start, end: end)
        var position = first
        var index = 0
        if extended {
            while index < count {
                let (header, data, next) = try HCIReportDecoder.extendedReport(buffer, at: position, end: end, index: index)
                position = next
                index &+= 1
                guard header.isDataComplete else { continue }
                do throws(DecodeError) { try FrameScanner.scanReportData(buffer, data, header, body) } catch { malformedReport(error) }
            }
        } else {
            while index < count {
                let (header, data, next) = try HCIReportDecoder.legacyReport(buffer, at: position, end: end, index: index)
                position = next
                index &+= 1
                do throws(DecodeError) { try FrameScanner.scanReportData(buffer, data, header, body) } catch { malformedReport(error) }
            }
        }
        try HCIReportDecoder.checkEnd(at: position, end: end, reports: count)
    }
}

/// The protocol numbers of the hot path as literals: the public `static let`s they mirror are
/// globals, and reading a global costs a lazy-initialisation check on every access.
@usableFromInline
enum Number {
    /// ADType.manufacturerSpecificData, 0xFF.
    @inlinable static var manufacturerSpecificData: UInt8 { 0xFF }
    /// ADType.serviceData16, 0x16.
    @inlinable static var serviceData16: UInt8 { 0x16 }
    /// IBeaconFrame.appleCompanyID, 0x004C.
    @inlinable static var apple: UInt16 { 0x004C }
    /// IBeaconFrame.typeByte and payloadLength: 0x02, 0x15.
    @inlinable static var iBeaconType: UInt8 { 0x02 }
    @inlinable static var iBeaconLength: Int { 0x15 }
    /// AltBeaconFrame.manufacturerDataLength, 26.
    @inlinable static var altBeaconLength: Int { 26 }
    /// EddystoneFrame.serviceUUID and frame types.
    @inlinable static var eddystone: UInt16 { 0xFEAA }
    @inlinable static var eddystoneUID: UInt8 { 0x00 }
    @inlinable static var eddystoneURL: UInt8 { 0x10 }
    @inlinable static var eddystoneTLM: UInt8 { 0x20 }
    /// H4 event packet, LE Meta event, its two advertising report subevents, RSSI not available.
    @inlinable static var h4Event: UInt8 { 0x04 }
    @inlinable static var leMeta: UInt8 { 0x3E }
    @inlinable static var advertisingReport: UInt8 { 0x02 }
    @inlinable static var extendedAdvertisingReport: UInt8 { 0x0D }
    @inlinable static var rssiNotAvailable: Int8 { 127 }
    @inlinable static var legacyDataLimit: Int { 31 }
}

/// Finds and checks beacon frames in AD structures. Positions and error offsets index the
/// buffer given, so that frames inside an HCI event are located in the event. Positions stay
/// within the buffer's count, so arithmetic on them wraps instead of checking for overflow.
@usableFromInline
enum FrameScanner {
    @inlinable @inline(__always)
    static func scan(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int,
                     _ body: (LocatedFrame) -> Void) throws(DecodeError) {
        if let frame = soleIBeacon(buffer, Range(uncheckedBounds: (start, end))) {
            body(frame)
            return
        }
        var position = start
        while let frame = try nextFrame(buffer, &position, end: end) { body(frame) }
    }

    @inlinable @inline(__always)
    static func scanReportData(_ buffer: UnsafeRawBufferPointer, _ data: Range<Int>, _ header: ReportHeader,
                               _ body: (ReportHeader, LocatedFrame) -> Void) throws(DecodeError) {
        if let frame = soleIBeacon(buffer, data) {
            body(header, frame)
            return
        }
        var cursor = data.lowerBound
        while let frame = try nextFrame(buffer, &cursor, end: data.upperBound) { body(header, frame) }
    }

    /// The common case in one comparison: data that is exactly an iBeacon advertisement,
    /// `02 01 <flags> 1A FF 4C 00 02 15 <21 bytes>` (or the same without the flags). The walk
    /// would find this one frame and nothing else; tests check that both agree.
    @inlinable @inline(__always)
    static func soleIBeacon(_ buffer: UnsafeRawBufferPointer, _ data: Range<Int>) -> LocatedFrame? {
        let start = data.lowerBound
        let count = data.upperBound &- start
        // Both lengths are at least 27, so the buffer has a base address.
        if count == 30 {
            // Bytes 02 01 ?? 1A FF 4C 00 02, read little-endian, flags byte masked out.
            let head = UInt64(littleEndian: buffer.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: start, as: UInt64.self))
            guard head & 0xFFFF_FFFF_FF00_FFFF == 0x0200_4CFF_1A00_0102, buffer[start &+ 8] == 0x15 else { return nil }
            return LocatedFrame(format: .iBeacon, range: Range(uncheckedBounds: (start &+ 9, data.upperBound)))
        }
        if count == 27 {
            // Bytes 1A FF 4C 00 02 15.
            let base = buffer.baseAddress.unsafelyUnwrapped
            let head = UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
                | UInt64(buffer[start &+ 4]) << 32 | UInt64(buffer[start &+ 5]) << 40
            guard head == 0x1502_004C_FF1A else { return nil }
            return LocatedFrame(format: .iBeacon, range: Range(uncheckedBounds: (start &+ 6, data.upperBound)))
        }
        return nil
    }

    /// The next beacon frame at or after `position`, which moves past it; nil at the end.
    @inlinable @inline(__always)
    static func nextFrame(_ buffer: UnsafeRawBufferPointer, _ position: inout Int, end: Int) throws(DecodeError) -> LocatedFrame? {
        while position < end {
            let length = Int(buffer[position])
            if length == 0 {
                try DecodeFailure.checkPadding(buffer, from: position &+ 1, to: end)
                position = end
                return nil
            }
            guard length < end &- position else {
                throw DecodeFailure.adLength(at: position, length: length, left: end &- position &- 1)
            }
            let type = buffer[position &+ 1]
            let valueStart = position &+ 2
            position = position &+ 1 &+ length
            if type == Number.manufacturerSpecificData {
                if let frame = try locate(inManufacturerData: buffer, from: valueStart, to: position) { return frame }
            } else if type == Number.serviceData16 {
                if let frame = try locate(inServiceData: buffer, from: valueStart, to: position) { return frame }
            }
        }
        return nil
    }

    /// AltBeacon (any company, `BE AC`, exactly 26 bytes) or iBeacon (Apple's item 0x02).
    @inlinable @inline(__always)
    static func locate(inManufacturerData buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) throws(DecodeError) -> LocatedFrame? {
        let count = end &- start
        guard count >= 2 else {
            throw DecodeFailure.missing("manufacturer data company id", at: start, expected: "2 bytes", present: count)
        }
        if count == Number.altBeaconLength, buffer[start &+ 2] == 0xBE, buffer[start &+ 3] == 0xAC {
            return LocatedFrame(format: .altBeacon, range: Range(uncheckedBounds: (start, end)))
        }
        guard buffer.getUInt16LittleEndian(at: start) == Number.apple else { return nil }
        return try locateIBeacon(inAppleData: buffer, from: start &+ 2, to: end)
    }

    /// Apple's manufacturer data is a run of `type length value` items; the iBeacon item is
    /// type 0x02 with length 0x15. Other items (Nearby, Find My, AirPods...) are stepped over.
    @inlinable @inline(__always)
    static func locateIBeacon(inAppleData buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) throws(DecodeError) -> LocatedFrame? {
        var position = start
        while position < end {
            let type = buffer[position]
            guard position &+ 1 < end else {
                guard type != Number.iBeaconType else {
                    throw DecodeFailure.missing("iBeacon length", at: position &+ 1, expected: "0x15 after type 0x02", present: 0)
                }
                return nil
            }
            let length = Int(buffer[position &+ 1])
            let payload = position &+ 2
            if type == Number.iBeaconType {
                guard length == Number.iBeaconLength else {
                    throw DecodeFailure.iBeaconLength(at: position &+ 1, found: UInt8(length))
                }
                guard end &- payload >= length else {
                    throw DecodeFailure.iBeaconTruncated(at: end, present: end &- payload)
                }
                return LocatedFrame(format: .iBeacon, range: Range(uncheckedBounds: (payload, payload &+ length)))
            }
            guard end &- payload >= length else { return nil }
            position = payload &+ length
        }
        return nil
    }

    /// Eddystone frames under the 16-bit service UUID 0xFEAA. Kept out of line: service data
    /// is rarer than manufacturer data, and a smaller walk inlines into its caller.
    @usableFromInline
    static func locate(inServiceData buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) throws(DecodeError) -> LocatedFrame? {
        let count = end &- start
        guard count >= 2 else {
            throw DecodeFailure.missing("service data UUID", at: start, expected: "2 bytes", present: count)
        }
        guard buffer.getUInt16LittleEndian(at: start) == Number.eddystone else { return nil }
        guard count >= 3 else {
            throw DecodeFailure.missing("Eddystone frame type", at: start &+ 2, expected: "a frame type byte after AA FE", present: 0)
        }
        let frame = start &+ 2
        let available = end &- frame &- 1
        switch buffer[frame] {
        case Number.eddystoneUID:
            // TX power, 10-byte namespace, 6-byte instance; the 2 reserved bytes are often left out.
            guard available >= 17 else {
                throw DecodeFailure.missing("Eddystone-UID", at: end, expected: "17 bytes (TX power, namespace 10, instance 6) after the frame type",
                                            present: available)
            }
            return LocatedFrame(format: .eddystoneUID, range: Range(uncheckedBounds: (frame, end)))
        case Number.eddystoneURL:
            guard available >= 2 else {
                throw DecodeFailure.missing("Eddystone-URL", at: end, expected: "TX power and URL scheme after the frame type", present: available)
            }
            try EddystoneURLCoding.validate(buffer, scheme: frame &+ 2, end: end)
            return LocatedFrame(format: .eddystoneURL, range: Range(uncheckedBounds: (frame, end)))
        case Number.eddystoneTLM:
            guard available >= 1 else {
                throw DecodeFailure.missing("Eddystone-TLM version", at: end, expected: "a version byte", present: 0)
            }
            // Version 0x01 is encrypted telemetry (eTLM), which needs the beacon's key.
            guard buffer[frame &+ 1] == 0x00 else { return nil }
            guard available >= 13 else {
                throw DecodeFailure.missing("Eddystone-TLM", at: end,
                                            expected: "13 bytes (version, battery 2, temperature 2, count 4, uptime 4) after the frame type",
                                            present: available)
            }
            return LocatedFrame(format: .eddystoneTLM, range: Range(uncheckedBounds: (frame, end)))
        default:
            // EID (0x30) and future types carry nothing Proxima reads.
            return nil
        }
    }
}
