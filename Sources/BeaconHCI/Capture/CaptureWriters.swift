import BeaconKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes btsnoop version 1, by default with datalink 1002 (HCI UART, H4), the format `btmon -w`
/// writes and `btmon -r` and Wireshark read; datalink 1001 (unencapsulated HCI) on request.
public final class BTSnoopWriter: PacketRecorder, @unchecked Sendable {
    /// btsnoop datalink types (RFC 1761 style header, values from the btsnoop format).
    public enum Datalink: UInt32, Sendable, Hashable {
        /// 1001: HCI packets without the H4 byte; flags say command/event versus data. SCO and
        /// ISO packets cannot be told apart from ACL in it and are left out.
        case hci = 1001
        /// 1002: H4 packets, type byte first.
        case hciUART = 1002
    }

    /// "btsnoop\0", version 1, datalink 1002, all big-endian.
    public static let header: [UInt8] = header(datalink: .hciUART)

    public static func header(datalink: Datalink) -> [UInt8] {
        Array("btsnoop".utf8) + [0, 0, 0, 0, 1] + bigEndian(datalink.rawValue)
    }

    public let datalink: Datalink
    private let file: CaptureFile

    /// Creates (or truncates) the file and writes the header.
    public init(url: URL, datalink: Datalink = .hciUART) throws {
        self.datalink = datalink
        file = try CaptureFile(url: url, header: Self.header(datalink: datalink))
    }

    public func record(_ packet: TimestampedPacket) throws {
        guard let bytes = Self.encodeRecord(packet, datalink: datalink) else { return }
        try file.append(bytes)
    }

    public func close() throws { try file.close() }

    /// One datalink-1002 record: original and included length, flags (bit 0 received, bit 1
    /// command or event), cumulative drops, timestamp; then the H4 packet.
    public static func encodeRecord(_ packet: TimestampedPacket) -> [UInt8] {
        encodeRecord(packet, datalink: .hciUART) ?? []
    }

    /// One record for `datalink`, or nil when that datalink cannot carry the packet.
    public static func encodeRecord(_ packet: TimestampedPacket, datalink: Datalink) -> [UInt8]? {
        let isCommandOrEvent = packet.packet.type == .command || packet.packet.type == .event
        let data: [UInt8]
        switch datalink {
        case .hciUART:
            data = packet.packet.h4Bytes
        case .hci:
            guard isCommandOrEvent || packet.packet.type == .aclData else { return nil }
            data = packet.packet.body
        }
        var flags: UInt32 = packet.direction == .received ? 1 : 0
        if isCommandOrEvent { flags |= 2 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24 + data.count)
        bytes += bigEndian(UInt32(data.count)) + bigEndian(UInt32(data.count)) + bigEndian(flags) + bigEndian(UInt32(0))
        bytes += bigEndian(UInt64(bitPattern: packet.microseconds + btsnoopUnixEpochMicroseconds))
        return bytes + data
    }
}

/// Writes classic pcap with link type 201 (LINKTYPE_BLUETOOTH_HCI_H4_WITH_PHDR): each packet
/// is a 4-byte big-endian direction (0 sent, 1 received) and the H4 packet. tshark and
/// Wireshark decode it.
public final class PcapWriter: PacketRecorder, @unchecked Sendable {
    /// Little-endian microsecond pcap 2.4, snap length 65535, link type 201.
    public static let header: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         0xFF, 0xFF, 0, 0, 201, 0, 0, 0]

    private let file: CaptureFile

    public init(url: URL) throws {
        file = try CaptureFile(url: url, header: Self.header)
    }

    public func record(_ packet: TimestampedPacket) throws { try file.append(Self.encodeRecord(packet)) }

    public func close() throws { try file.close() }

    public static func encodeRecord(_ packet: TimestampedPacket) -> [UInt8] {
        let data = bigEndian(UInt32(packet.direction == .received ? 1 : 0)) + packet.packet.h4Bytes
        let seconds = packet.microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        var bytes = littleEndian(UInt32(truncatingIfNeeded: seconds.quotient))
        bytes += littleEndian(UInt32(truncatingIfNeeded: seconds.remainder))
        bytes += littleEndian(UInt32(data.count)) + littleEndian(UInt32(data.count))
        return bytes + data
    }
}

/// The capture format a file name asks for: `.pcap` and `.cap` mean pcap, anything else btsnoop.
public enum CaptureFileFormat: Sendable, Hashable {
    case btsnoop
    case pcap

    public init(fileName: String) {
        let lower = fileName.lowercased()
        self = lower.hasSuffix(".pcap") || lower.hasSuffix(".cap") ? .pcap : .btsnoop
    }

    /// Opens a writer for this format.
    public func makeWriter(url: URL) throws -> any CaptureWriter {
        switch self {
        case .btsnoop: try BTSnoopWriter(url: url)
        case .pcap: try PcapWriter(url: url)
        }
    }
}

/// A recorder that writes a file and must be closed.
public protocol CaptureWriter: PacketRecorder {
    func close() throws
}

extension BTSnoopWriter: CaptureWriter {}
extension PcapWriter: CaptureWriter {}

/// Opens the path itself for writing, creating or truncating a regular file. Foundation's
/// `createFile` writes a temporary file and renames it over the path, which would replace a
/// symlink, FIFO or device there with a regular file; writing through the path keeps what the
/// user named (`--pcap /dev/stdout`, a FIFO Wireshark reads, a link into another folder).
private func openForWriting(_ url: URL) throws -> FileHandle {
    let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
        let code = errno
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path,
            NSLocalizedDescriptionKey: "cannot open capture file \(url.path) for writing: \(String(cString: strerror(code)))"])
    }
    return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
}

/// The file both writers share the handling of: created with its header, records appended
/// whole under a lock (packets are recorded from the host's actor and the I/O side at once),
/// closed once.
final class CaptureFile: @unchecked Sendable {
    private let handle: FileHandle
    private let lock = NSLock()

    init(url: URL, header: [UInt8]) throws {
        handle = try openForWriting(url)
        try handle.write(contentsOf: header)
    }

    func append(_ bytes: [UInt8]) throws {
        try lock.withLock { try handle.write(contentsOf: bytes) }
    }

    func close() throws {
        try lock.withLock { try handle.close() }
    }
}

func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
