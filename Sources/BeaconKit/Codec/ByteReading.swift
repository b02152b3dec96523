import Foundation

// Reads on raw buffers for the decoders. Callers check bounds first; these helpers only assemble
// the bytes, so that the hot path neither allocates nor traps.
extension UnsafeRawBufferPointer {
    @inline(__always)
    func uint16BigEndian(at offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    @inline(__always)
    func uint16LittleEndian(at offset: Int) -> UInt16 {
        UInt16(self[offset + 1]) << 8 | UInt16(self[offset])
    }

    @inline(__always)
    func uint32BigEndian(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16
            | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }

    @inline(__always)
    func int8(at offset: Int) -> Int8 { Int8(bitPattern: self[offset]) }

    @inline(__always)
    func uuid(at offset: Int) -> UUID {
        UUID(uuid: (self[offset], self[offset + 1], self[offset + 2], self[offset + 3],
                    self[offset + 4], self[offset + 5], self[offset + 6], self[offset + 7],
                    self[offset + 8], self[offset + 9], self[offset + 10], self[offset + 11],
                    self[offset + 12], self[offset + 13], self[offset + 14], self[offset + 15]))
    }

    @inline(__always)
    func bluetoothAddress(at offset: Int) -> BluetoothAddress {
        var value: UInt64 = 0
        for index in 0..<6 { value |= UInt64(self[offset + index]) << (8 * UInt64(index)) }
        return BluetoothAddress(rawValue: value)
    }

    func bytes(_ range: Range<Int>) -> [UInt8] { Array(self[range]) }
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
    @inline(__always)
    func withDecodingBuffer<Result>(_ body: (UnsafeRawBufferPointer) throws(DecodeError) -> Result) throws(DecodeError) -> Result {
        let outcome: Swift.Result<Result, DecodeError> = withUnsafeBytes { buffer in
            Swift.Result { () throws(DecodeError) -> Result in try body(buffer) }
        }
        return try outcome.get()
    }
}

extension ArraySlice where Element == UInt8 {
    @inline(__always)
    func withDecodingBuffer<Result>(_ body: (UnsafeRawBufferPointer) throws(DecodeError) -> Result) throws(DecodeError) -> Result {
        let outcome: Swift.Result<Result, DecodeError> = withUnsafeBytes { buffer in
            Swift.Result { () throws(DecodeError) -> Result in try body(buffer) }
        }
        return try outcome.get()
    }
}
