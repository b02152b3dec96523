import BeaconKit
import Foundation

/// btsnoop's clock: microseconds since midnight, 1 January of year 0, as BlueZ and Wireshark
/// count it. This is 1970-01-01 on that clock.
let btsnoopUnixEpochMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000

/// The packets of a capture, in file order.
public struct Capture: Sendable, Hashable {
    public enum Format: Sendable, Hashable, CustomStringConvertible {
        case btsnoop(datalink: UInt32)
        case pcap(linkType: UInt32)

        public var description: String {
            switch self {
            case .btsnoop(let datalink): "btsnoop datalink \(datalink)"
            case .pcap(let linkType): "pcap link type \(linkType)"
            }
        }
    }

    public var format: Format
    public var packets: [TimestampedPacket]
    /// Records kept out of `packets`: LE link-layer packets that are not advertisements or
    /// failed their CRC, btsnoop records of packet types H4 cannot carry.
    public var skippedRecords: Int
    /// Where each packet's record is in the file, in the order of `packets`.
    public var records: [RecordLocation]

    /// A record's number (from 0, counting skipped records too) and its byte offset in the file.
    public struct RecordLocation: Sendable, Hashable, CustomStringConvertible {
        public var index: Int
        public var offset: Int

        public var description: String { "record \(index) (byte \(offset))" }
    }
}

/// Reads btsnoop (datalink 1001 unencapsulated HCI, 1002 H4) and classic pcap (link types 201
/// H4 with direction, 187 H4, 256 LE link layer with pseudo-header, as sniffers write).
///
/// LE link-layer advertisements become LE Advertising Report events, as a scanning controller
/// would have reported them, so every capture replays through the same path as a live scan.
public enum CaptureReader {
    public static func read(contentsOf url: URL) throws -> Capture {
        let data = try Data(contentsOf: url)
        return try parse([UInt8](data))
    }

    public static func parse(_ bytes: [UInt8]) throws(DecodeError) -> Capture {
        if bytes.count >= 8, bytes[0..<8].elementsEqual(Array("btsnoop".utf8) + [0]) {
            return try parseBTSnoop(bytes)
        }
        if bytes.count >= 4 {
            let magic = bytes[0..<4].map { $0 }
            let known: [[UInt8]] = [[0xA1, 0xB2, 0xC3, 0xD4], [0xD4, 0xC3, 0xB2, 0xA1],
                                    [0xA1, 0xB2, 0x3C, 0x4D], [0x4D, 0x3C, 0xB2, 0xA1]]
            if known.contains(magic) { return try parsePcap(bytes) }
            if magic == [0x0A, 0x0D, 0x0D, 0x0A] {
                throw DecodeError(field: "capture file magic", offset: 0, expected: "btsnoop or classic pcap",
                    found: "pcapng; convert it with `editcap -F pcap IN OUT`")
            }
        }
        throw DecodeError(field: "capture file magic", offset: 0,
            expected: "\"btsnoop\\0\" or a pcap magic (A1 B2 C3 D4, A1 B2 3C 4D in either byte order)",
            found: bytes.isEmpty ? "an empty file" : hexBytes(bytes.prefix(8)))
    }

    // MARK: btsnoop

    static func parseBTSnoop(_ bytes: [UInt8]) throws(DecodeError) -> Capture {
        var reader = ByteReader(bytes: bytes, position: 8)
        let version = try reader.captureUInt32(bigEndian: true, field: "btsnoop version")
        guard version == 1 else {
            throw DecodeError(field: "capture btsnoop version", offset: 8, expected: "1", found: "\(version)")
        }
        let datalink = try reader.captureUInt32(bigEndian: true, field: "btsnoop datalink")
        guard datalink == 1001 || datalink == 1002 else {
            throw DecodeError(field: "capture btsnoop datalink", offset: 12,
                expected: "1001 (HCI) or 1002 (HCI UART, H4)", found: "\(datalink)")
        }
        var packets: [TimestampedPacket] = []
        var records: [Capture.RecordLocation] = []
        var skipped = 0
        var index = 0
        while !reader.atEnd {
            let recordStart = reader.position
            let field = "record \(index)"
            let original = try reader.captureUInt32(bigEndian: true, field: "\(field) original length")
            let included = try reader.captureUInt32(bigEndian: true, field: "\(field) included length")
            let flags = try reader.captureUInt32(bigEndian: true, field: "\(field) flags")
            _ = try reader.captureUInt32(bigEndian: true, field: "\(field) cumulative drops")
            let stamp = try reader.captureUInt64BigEndian(field: "\(field) timestamp")
            guard included <= original, included <= 0x1_0000 else {
                throw DecodeError(field: "capture \(field) included length", offset: recordStart + 4,
                    expected: "at most the original length (\(original)) and 65536", found: "\(included)")
            }
            let data = Array(try reader.captureBytes(Int(included), field: "\(field) packet data"))
            let microseconds = Int64(bitPattern: stamp) &- btsnoopUnixEpochMicroseconds
            let direction: PacketDirection = flags & 1 == 1 ? .received : .sent
            index += 1
            let packet: HCIPacket
            if datalink == 1002 {
                guard let type = data.first else {
                    skipped += 1
                    continue
                }
                packet = HCIPacket(type: H4PacketType(rawValue: type), body: Array(data.dropFirst()))
            } else {
                let isCommandOrEvent = flags & 2 == 2
                let type: H4PacketType = isCommandOrEvent ? (direction == .sent ? .command : .event) : .aclData
                packet = HCIPacket(type: type, body: data)
            }
            packets.append(TimestampedPacket(microseconds: microseconds, direction: direction, packet: packet))
            records.append(Capture.RecordLocation(index: index - 1, offset: recordStart))
        }
        return Capture(format: .btsnoop(datalink: datalink), packets: packets, skippedRecords: skipped, records: records)
    }

    // MARK: pcap

    static func parsePcap(_ bytes: [UInt8]) throws(DecodeError) -> Capture {
        let bigEndianFile = bytes[0] == 0xA1
        let nanoseconds = bytes[2] == 0x3C || bytes[1] == 0x3C
        guard bytes.count >= 24 else {
            throw DecodeError(field: "capture pcap file header", offset: bytes.count, expected: "24 bytes",
                               found: "the end of the file after \(bytes.count) bytes")
        }
        var reader = ByteReader(bytes: bytes, position: 20)
        let linkType = try reader.captureUInt32(bigEndian: bigEndianFile, field: "pcap link type") & 0x0FFF_FFFF
        guard [201, 187, 256].contains(linkType) else {
            throw DecodeError(field: "capture pcap link type", offset: 20,
                expected: "201 (HCI H4 with direction), 187 (HCI H4) or 256 (LE link layer with pseudo-header)",
                found: "\(linkType)")
        }
        var packets: [TimestampedPacket] = []
        var records: [Capture.RecordLocation] = []
        var skipped = 0
        var index = 0
        while !reader.atEnd {
            let recordStart = reader.position
            let field = "record \(index)"
            let seconds = try reader.captureUInt32(bigEndian: bigEndianFile, field: "\(field) seconds")
            let fraction = try reader.captureUInt32(bigEndian: bigEndianFile, field: "\(field) fraction")
            let included = try reader.captureUInt32(bigEndian: bigEndianFile, field: "\(field) included length")
            _ = try reader.captureUInt32(bigEndian: bigEndianFile, field: "\(field) original length")
            guard included <= 0x4_0000 else {
                throw DecodeError(field: "capture \(field) included length", offset: recordStart + 8,
                    expected: "at most 262144", found: "\(included)")
            }
            let fractionLimit: UInt32 = nanoseconds ? 999_999_999 : 999_999
            guard fraction <= fractionLimit else {
                throw DecodeError(field: "capture \(field) timestamp fraction (\(nanoseconds ? "ts_nsec" : "ts_usec"))",
                    offset: recordStart + 4, expected: "0…\(fractionLimit) (\(nanoseconds ? "nano" : "micro")seconds within the second)", found: "\(fraction)")
            }
            let dataOffset = reader.position
            let data = Array(try reader.captureBytes(Int(included), field: "\(field) packet data"))
            let microseconds = Int64(seconds) * 1_000_000 + Int64(nanoseconds ? fraction / 1000 : fraction)
            index += 1
            switch linkType {
            case 201:
                guard data.count >= 5 else {
                    throw DecodeError(field: "capture \(field) H4 pseudo-header", offset: dataOffset,
                        expected: "4-byte direction and an H4 packet", found: "\(data.count) bytes")
                }
                let direction: PacketDirection = data[3] & 1 == 1 ? .received : .sent
                packets.append(TimestampedPacket(microseconds: microseconds, direction: direction,
                    packet: HCIPacket(type: H4PacketType(rawValue: data[4]), body: Array(data[5...]))))
            case 187:
                guard let type = data.first else {
                    skipped += 1
                    continue
                }
                let h4Type = H4PacketType(rawValue: type)
                // No direction on this link type: commands go out, everything else comes in.
                let direction: PacketDirection = h4Type == .command ? .sent : .received
                packets.append(TimestampedPacket(microseconds: microseconds, direction: direction,
                    packet: HCIPacket(type: h4Type, body: Array(data.dropFirst()))))
            default:
                if let event = try LELinkLayer.advertisingReportEvent(data[...], offset: dataOffset, field: field) {
                    packets.append(TimestampedPacket(microseconds: microseconds, direction: .received, packet: event))
                } else {
                    skipped += 1
                }
            }
            if packets.count > records.count { records.append(Capture.RecordLocation(index: index - 1, offset: recordStart)) }
        }
        return Capture(format: .pcap(linkType: linkType), packets: packets, skippedRecords: skipped, records: records)
    }
}

extension ByteReader {
    /// Reads as the capture reader needs: a short file is a `DecodeError` naming the record,
    /// its field prefixed "capture" so a message says which input it was.
    mutating func captureBytes(_ count: Int, field: String) throws(DecodeError) -> ArraySlice<UInt8> {
        try readBytes(count, field: "capture \(field)")
    }

    mutating func captureUInt32(bigEndian: Bool, field: String) throws(DecodeError) -> UInt32 {
        bigEndian ? try readUInt32BigEndian(field: "capture \(field)") : try readUInt32LittleEndian(field: "capture \(field)")
    }

    mutating func captureUInt64BigEndian(field: String) throws(DecodeError) -> UInt64 {
        try readUInt64BigEndian(field: "capture \(field)")
    }
}
