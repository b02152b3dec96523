/// Cuts an H4 byte stream into HCI packets. Reads may end anywhere, even inside a header; the
/// framer keeps the partial packet until the rest arrives.
///
/// H4 has no sync pattern, so a byte that is not a packet type (0x01–0x05) means the stream is
/// out of step. By default that is an error naming the byte and its offset in the stream.
/// `.resynchronize` instead drops bytes until one is a packet type again, counting what it drops:
/// useful on a UART that glitched at start-up, never sure to find the true boundary.
public struct H4Framer: Sendable {
    public enum GarbagePolicy: Sendable, Hashable {
        case fail
        case resynchronize
    }

    public var policy: GarbagePolicy
    /// Bytes dropped while resynchronising.
    public private(set) var droppedBytes = 0
    private var buffer: [UInt8] = []
    /// Stream offset of `buffer[0]`, for error messages.
    private var bufferOffset = 0

    public init(policy: GarbagePolicy = .fail) { self.policy = policy }

    /// Bytes held back, waiting for the rest of their packet.
    public var pendingByteCount: Int { buffer.count }

    /// Adds bytes from one read and returns every packet completed by them, in order.
    public mutating func append(_ bytes: some Sequence<UInt8>) throws(H4FramingError) -> [HCIPacket] {
        buffer.append(contentsOf: bytes)
        var packets: [HCIPacket] = []
        var start = 0
        defer {
            buffer.removeFirst(start)
            bufferOffset += start
        }
        while start < buffer.count {
            let type = H4PacketType(rawValue: buffer[start])
            guard let header = Self.headerLayout(type) else {
                switch policy {
                case .fail:
                    throw H4FramingError(offset: bufferOffset + start, found: buffer[start])
                case .resynchronize:
                    droppedBytes += 1
                    start += 1
                    continue
                }
            }
            let available = buffer.count - start - 1
            guard available >= header.size else { break }
            let headerStart = start + 1
            var length = Int(buffer[headerStart + header.lengthOffset])
            if header.lengthBytes == 2 {
                length |= Int(buffer[headerStart + header.lengthOffset + 1]) << 8
                length &= header.lengthMask
            }
            let total = header.size + length
            guard available >= total else { break }
            packets.append(HCIPacket(type: type, body: Array(buffer[headerStart..<headerStart + total])))
            start = headerStart + total
        }
        return packets
    }

    struct HeaderLayout {
        var size: Int
        var lengthOffset: Int
        var lengthBytes: Int
        var lengthMask: Int
    }

    /// Header sizes and where the length sits (Core Spec v5.4, Vol 4, Part E, 5.4).
    static func headerLayout(_ type: H4PacketType) -> HeaderLayout? {
        switch type {
        case .command: HeaderLayout(size: 3, lengthOffset: 2, lengthBytes: 1, lengthMask: 0xFF)
        case .aclData: HeaderLayout(size: 4, lengthOffset: 2, lengthBytes: 2, lengthMask: 0xFFFF)
        case .synchronousData: HeaderLayout(size: 3, lengthOffset: 2, lengthBytes: 1, lengthMask: 0xFF)
        case .event: HeaderLayout(size: 2, lengthOffset: 1, lengthBytes: 1, lengthMask: 0xFF)
        case .isoData: HeaderLayout(size: 4, lengthOffset: 2, lengthBytes: 2, lengthMask: 0x3FFF)
        default: nil
        }
    }
}

/// The H4 stream held a byte where a packet type must be.
public struct H4FramingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Offset of the bad byte from the start of the stream.
    public var offset: Int
    public var found: UInt8

    public var description: String {
        "H4 stream out of step at byte \(offset): expected a packet type (0x01 command, 0x02 ACL, "
            + "0x03 SCO, 0x04 event, 0x05 ISO), found \(hexByte(found)); is this really an H4 (HCI UART) "
            + "controller at the right baud rate?"
    }
}
