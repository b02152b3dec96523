/// Builds the errors of the inlined decoders. Kept out of line so that the hot path stays small
/// and string formatting happens only when input is malformed.
@usableFromInline
enum DecodeFailure {
    @usableFromInline @inline(never)
    static func missing(_ field: String, at offset: Int, expected: String, present: Int) -> DecodeError {
        DecodeError(field: field, offset: offset, expected: expected,
                    found: present == 0 ? "end of data" : "\(present) byte\(present == 1 ? "" : "s")")
    }

    @usableFromInline @inline(never)
    static func adLength(at offset: Int, length: Int, left: Int) -> DecodeError {
        DecodeError(field: "AD structure length", offset: offset,
                    expected: "at most \(left) (the bytes left)", found: "\(length) (\(hexByte(UInt8(truncatingIfNeeded: length))))")
    }

    @usableFromInline @inline(never)
    static func iBeaconLength(at offset: Int, found: UInt8) -> DecodeError {
        DecodeError(field: "iBeacon length", offset: offset,
                    expected: "\(hexByte(IBeaconFrame.payloadLength)) (21 bytes: UUID, major, minor, power)", found: hexByte(found))
    }

    @usableFromInline @inline(never)
    static func iBeaconTruncated(at offset: Int, present: Int) -> DecodeError {
        let field = switch present {
        case ..<16: "iBeacon proximity UUID"
        case 16..<18: "iBeacon major"
        case 18..<20: "iBeacon minor"
        default: "iBeacon measured power"
        }
        return DecodeError(field: field, offset: offset,
                           expected: "21 bytes of UUID, major, minor and power after 4C 00 02 15",
                           found: "\(present) byte\(present == 1 ? "" : "s")")
    }

    @usableFromInline @inline(never)
    static func value(_ field: String, at offset: Int, expected: String, found: UInt8) -> DecodeError {
        DecodeError(field: field, offset: offset, expected: expected, found: hexByte(found))
    }

    @usableFromInline @inline(never)
    static func count(_ field: String, at offset: Int, expected: String, found: Int) -> DecodeError {
        DecodeError(field: field, offset: offset, expected: expected, found: "\(found)")
    }

    @usableFromInline @inline(never)
    static func eventCode(at offset: Int, found: UInt8) -> DecodeError {
        DecodeError(field: "HCI event code", offset: offset, expected: "0x3E (LE Meta event)",
                    found: "\(hexByte(found)) (\(HCIReportDecoder.eventName(found)))")
    }

    @usableFromInline @inline(never)
    static func subevent(at offset: Int, found: UInt8) -> DecodeError {
        DecodeError(field: "LE Meta subevent code", offset: offset,
                    expected: "0x02 (LE Advertising Report) or 0x0D (LE Extended Advertising Report)",
                    found: "\(hexByte(found)) (\(HCIReportDecoder.subeventName(found)))")
    }

    @usableFromInline @inline(never)
    static func trailing(at offset: Int, reports: Int, extra: Int) -> DecodeError {
        DecodeError(field: "LE Meta parameters", offset: offset,
                    expected: "the end after \(reports) report\(reports == 1 ? "" : "s")",
                    found: "\(extra) more byte\(extra == 1 ? "" : "s")")
    }

    @usableFromInline @inline(never)
    static func parameterLength(at offset: Int, present: Int, declared: Int) -> DecodeError {
        DecodeError(field: "HCI event parameter length", offset: offset,
                    expected: "\(present) (the parameter bytes present)", found: "\(declared)")
    }

    @usableFromInline @inline(never)
    static func eventParameters(at offset: Int, needed: Int, present: Int) -> DecodeError {
        missing("HCI event parameters", at: offset, expected: "\(needed) bytes as the length byte declares", present: present)
    }

    @usableFromInline @inline(never)
    static func numReports(at offset: Int, limit: Int, found: Int) -> DecodeError {
        DecodeError(field: "Num_Reports", offset: offset, expected: "1…\(limit)", found: "\(found)")
    }

    static func reportField(_ index: Int, _ field: String, extended: Bool) -> String {
        "\(extended ? "extended report" : "report") \(index + 1) \(field)"
    }

    @usableFromInline @inline(never)
    static func report(_ index: Int, _ field: String, extended: Bool = false, at offset: Int, expected: String, present: Int) -> DecodeError {
        missing(reportField(index, field, extended: extended), at: offset, expected: expected, present: present)
    }

    @usableFromInline @inline(never)
    static func reportBytes(_ index: Int, _ field: String, extended: Bool = false, at offset: Int, needed: Int, present: Int) -> DecodeError {
        missing(reportField(index, field, extended: extended), at: offset, expected: "\(needed) bytes", present: present)
    }

    @usableFromInline @inline(never)
    static func reportValue(_ index: Int, _ field: String, at offset: Int, expected: String, found: UInt8) -> DecodeError {
        value(reportField(index, field, extended: false), at: offset, expected: expected, found: found)
    }

    @usableFromInline @inline(never)
    static func reportCount(_ index: Int, _ field: String, at offset: Int, expected: String, found: Int) -> DecodeError {
        count(reportField(index, field, extended: false), at: offset, expected: expected, found: found)
    }

    /// After the zero length that ends the significant part, only zero padding may follow
    /// (Core Specification Vol 3, Part C, 11).
    @usableFromInline @inline(never)
    static func checkPadding(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) throws(DecodeError) {
        for position in start..<max(start, end) where buffer[position] != 0 {
            throw DecodeError(field: "AD padding", offset: position,
                              expected: "0x00 after the zero length that ends the AD structures",
                              found: hexByte(buffer[position]))
        }
    }
}
