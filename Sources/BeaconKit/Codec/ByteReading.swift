import Foundation

// One vocabulary for reading bytes, as swift-nio's ByteBuffer has it: `get…(at:)` reads at an
// offset and moves nothing; `read…` reads at a `ByteReader`'s position and moves it past what
// it read. Multi-byte names say their byte order.

// `get…(at:)` on raw buffers, for the decoders' hot path. Callers check bounds first; these only
// assemble the bytes (offsets are inside the buffer, so their sums cannot overflow), so that the
// hot path neither allocates nor traps.
extension UnsafeRawBufferPointer {
    @inlinable @inline(__always)
    func getUInt16BigEndian(at offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset &+ 1])
    }

    @inlinable @inline(__always)
    func getUInt16LittleEndian(at offset: Int) -> UInt16 {
        UInt16(self[offset &+ 1]) << 8 | UInt16(self[offset])
    }

    @inlinable @inline(__always)
    func getUInt32BigEndian(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset &+ 1]) << 16
            | UInt32(self[offset &+ 2]) << 8 | UInt32(self[offset &+ 3])
    }

    @inlinable @inline(__always)
    func getInt8(at offset: Int) -> Int8 { Int8(bitPattern: self[offset]) }

    /// Sixteen bytes in written order as a UUID. Foundation's UUID is a wrapper of `uuid_t`, so
    /// the bytes are loaded as one; `UUID(uuid:)` would be an opaque call per frame. The layout
    /// check is a compile-time constant and a test compares both ways.
    @inlinable @inline(__always)
    func getUUID(at offset: Int) -> UUID {
        // Callers have checked 16 bytes are there, so the buffer has a base address.
        let bytes = baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: uuid_t.self)
        if MemoryLayout<UUID>.size == MemoryLayout<uuid_t>.size && MemoryLayout<UUID>.alignment == MemoryLayout<uuid_t>.alignment {
            return unsafeBitCast(bytes, to: UUID.self)
        }
        return UUID(uuid: bytes)
    }

    /// Six bytes in HCI order (least significant first) as a 48-bit number.
    @inlinable @inline(__always)
    func getAddress(at offset: Int) -> UInt64 {
        UInt64(UInt32(self[offset]) | UInt32(self[offset &+ 1]) << 8 | UInt32(self[offset &+ 2]) << 16 | UInt32(self[offset &+ 3]) << 24)
            | UInt64(self[offset &+ 4]) << 32 | UInt64(self[offset &+ 5]) << 40
    }

    @usableFromInline
    func getBytes(_ range: Range<Int>) -> [UInt8] { Array(self[range]) }
}

/// `read…` over bytes whose lengths are not checked beforehand (file headers and records): each
/// read checks that its bytes are there, throws naming the field and offset when not, and moves
/// `position` past what it read.
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    /// Where the next read starts.
    public var position: Int

    public init(bytes: [UInt8], position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    public var atEnd: Bool { position >= bytes.count }

    public mutating func readBytes(_ count: Int, field: String) throws(DecodeError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - position >= count else {
            throw DecodeError(field: field, offset: position, expected: "\(count) bytes",
                              found: "\(bytes.count - position) bytes before the end")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    public mutating func readUInt32BigEndian(field: String) throws(DecodeError) -> UInt32 {
        try readBytes(4, field: field).reduce(0) { $0 << 8 | UInt32($1) }
    }

    public mutating func readUInt32LittleEndian(field: String) throws(DecodeError) -> UInt32 {
        try readBytes(4, field: field).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    public mutating func readUInt64BigEndian(field: String) throws(DecodeError) -> UInt64 {
        try readBytes(8, field: field).reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// How a byte is shown in error messages and listings: `0x4C`.
func hexByte(_ byte: UInt8) -> String {
    (byte < 16 ? "0x0" : "0x") + String(byte, radix: 16, uppercase: true)
}

func hexWord(_ word: UInt16) -> String {
    let digits = String(word, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
}

extension UUID {
    /// The 16 bytes in written order, as they appear on the air in an iBeacon frame.
    public var bytes: [UInt8] {
        let u = uuid
        return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }
}

// `withUnsafeBytes` rethrows untyped errors; these keep `DecodeError` typed through it.
extension Array where Element == UInt8 {
    @inlinable @inline(__always)
    func withDecodingBuffer<Result>(_ body: (UnsafeRawBufferPointer) throws(DecodeError) -> Result) throws(DecodeError) -> Result {
        let outcome: Swift.Result<Result, DecodeError> = withUnsafeBytes { buffer in
            Swift.Result { () throws(DecodeError) -> Result in try body(buffer) }
        }
        return try outcome.get()
    }
}

extension ArraySlice where Element == UInt8 {
    @inlinable @inline(__always)
    func withDecodingBuffer<Result>(_ body: (UnsafeRawBufferPointer) throws(DecodeError) -> Result) throws(DecodeError) -> Result {
        let outcome: Swift.Result<Result, DecodeError> = withUnsafeBytes { buffer in
            Swift.Result { () throws(DecodeError) -> Result in try body(buffer) }
        }
        return try outcome.get()
    }
}
