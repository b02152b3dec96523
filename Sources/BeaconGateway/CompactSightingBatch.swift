import BeaconKit
import Foundation

/// The compact body of `POST /v1/sightings`, content type ``mediaType``: the same batch as the
/// JSON form in fixed-width binary records, so the server reads it straight into `Sighting`
/// values without a JSON parser. Layout (all integers big-endian), documented byte by byte in
/// docs/server.md:
///
/// ```
/// header   0  4  magic "PXSB"
///          4  1  version (1)
///          5  1  flags: bit 0 = a sequence number follows; other bits 0
///          6  2  receiver count R
///          8  8  sequence (int64; 0 without flag bit 0)
///         16  4  sighting count N
/// then R receivers: length (1) + UTF-8 name
/// then N sightings: time (float64 seconds since 1970), receiver index (2), address (6, as
///         written), rssi (int8, 127 = not available), frame kind (1), then
///         kind 1 iBeacon: UUID (16), major (2), minor (2), measured power (int8)
///         kind 2 advertising data: length (1) + the AD structures that carry the frame
/// ```
///
/// The layout and its reader need no NIO (the fuzz target builds them alone); the ByteBuffer
/// forms the gateway and the server use are in CompactSightingBatch+ByteBuffer.swift.
public enum CompactSightingBatch {
    public static let mediaType = "application/vnd.proxima.sightings.v1"
    public static let magic: [UInt8] = Array("PXSB".utf8)
    public static let version: UInt8 = 1
    public static let headerLength = 20
    /// time 8 + receiver 2 + address 6 + rssi 1 + kind 1.
    static let recordPrefixLength = 18
    static let iBeaconBodyLength = 21
    static let rssiNotAvailable: Int8 = 127

    public enum FrameKind: UInt8, Sendable {
        case iBeacon = 1
        case advertisingData = 2
    }

    /// What the decoder enforces besides the layout: the batch size before any sighting is
    /// read, and (when given) the time range, so a refused time names its byte offset.
    public struct Limits: Sendable {
        public var maxSightings: Int
        public var times: ClosedRange<Double>?

        public init(maxSightings: Int, times: ClosedRange<Double>? = nil) {
            self.maxSightings = maxSightings
            self.times = times
        }
    }

    /// A body that breaks the layout or the limits: the field (as the JSON form names it),
    /// the byte offset in the body, what was expected and what was found.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var field: String
        public var offset: Int
        public var expected: String
        public var found: String
        /// The batch holds more sightings than allowed (answered 413 rather than 400).
        public var isTooLarge = false

        public init(field: String, offset: Int, expected: String, found: String) {
            self.field = field
            self.offset = offset
            self.expected = expected
            self.found = found
        }

        public var description: String { "\(field) at offset \(offset): expected \(expected), found \(found)" }
    }

    /// A batch the compact form cannot carry (the JSON form can).
    public struct Unencodable: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    // MARK: Decoding

    /// Reads a whole body. Every count is checked against the bytes left before it is used,
    /// so a short or lying body costs no more than its own length.
    public static func decode(bytes: UnsafeRawBufferPointer, limits: Limits) throws(Failure) -> SightingBatch {
        var reader = Reader(bytes: bytes)
        return try reader.batch(limits: limits)
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var remaining: Int { bytes.count - offset }

        func need(_ count: Int, _ field: @autoclosure () -> String, _ what: @autoclosure () -> String) throws(Failure) {
            guard remaining >= count else {
                throw Failure(field: field(), offset: offset, expected: "\(what()) (\(count) byte\(count == 1 ? "" : "s"))",
                              found: remaining == 0 ? "the end of the body" : "only \(remaining) byte\(remaining == 1 ? "" : "s")")
            }
        }

        func byte(_ at: Int) -> UInt8 { bytes[at] }

        func uint16(_ at: Int) -> UInt16 { UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self)) }
        func uint32(_ at: Int) -> UInt32 { UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        func uint64(_ at: Int) -> UInt64 { UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }

        mutating func batch(limits: Limits) throws(Failure) -> SightingBatch {
            try need(headerLength, "header", "the \(headerLength)-byte header")
            guard bytes[0] == magic[0], bytes[1] == magic[1], bytes[2] == magic[2], bytes[3] == magic[3] else {
                throw Failure(field: "magic", offset: 0, expected: "\"PXSB\" (50 58 53 42)",
                              found: (0..<4).map { String(format: "%02x", bytes[$0]) }.joined(separator: " "))
            }
            guard byte(4) == version else {
                throw Failure(field: "version", offset: 4, expected: "\(version)", found: "\(byte(4))")
            }
            let flags = byte(5)
            guard flags & 0xFE == 0 else {
                throw Failure(field: "flags", offset: 5, expected: "0 or 1 (bit 0: sequence present)", found: "\(flags)")
            }
            let receiverCount = Int(uint16(6))
            let rawSequence = Int64(bitPattern: uint64(8))
            if flags & 1 == 0, rawSequence != 0 {
                throw Failure(field: "sequence", offset: 8, expected: "0 when flag bit 0 is clear", found: "\(rawSequence)")
            }
            let count = Int(uint32(16))
            if count > limits.maxSightings {
                var failure = Failure(field: "sightings", offset: 16, expected: "at most \(limits.maxSightings) sightings per batch", found: "\(count)")
                failure.isTooLarge = true
                throw failure
            }
            offset = headerLength
            var receivers: [String] = []
            receivers.reserveCapacity(min(receiverCount, remaining))
            for index in 0..<receiverCount {
                try need(1, "receivers[\(index)]", "a name length")
                let length = Int(byte(offset))
                try need(1 + length, "receivers[\(index)]", "a name of \(length) bytes")
                let name = UnsafeRawBufferPointer(rebasing: bytes[(offset + 1)..<(offset + 1 + length)])
                guard let text = String(validating: name, as: UTF8.self) else {
                    throw Failure(field: "receivers[\(index)]", offset: offset + 1, expected: "UTF-8 text", found: "invalid UTF-8")
                }
                receivers.append(text)
                offset += 1 + length
            }
            // The shortest record bounds how many sightings the bytes left can hold.
            let shortest = recordPrefixLength + 2
            var sightings: [Sighting] = []
            sightings.reserveCapacity(min(count, remaining / shortest))
            for index in 0..<count {
                sightings.append(try sighting(index, receivers: receivers, limits: limits))
            }
            guard remaining == 0 else {
                throw Failure(field: "body", offset: offset, expected: "the end of the body after \(count) sightings", found: "\(remaining) more bytes")
            }
            return SightingBatch(sequence: flags & 1 == 1 ? Int(rawSequence) : nil, sightings: sightings)
        }

        mutating func sighting(_ index: Int, receivers: [String], limits: Limits) throws(Failure) -> Sighting {
            let start = offset
            try need(recordPrefixLength, "sightings[\(index)]", "a sighting record")
            let time = Double(bitPattern: uint64(start))
            if let range = limits.times, !(time.isFinite && range.contains(time)) {
                throw Failure(field: "sightings[\(index)].time", offset: start,
                              expected: "seconds since 1970 in \(range.lowerBound)…\(range.upperBound)", found: "\(time)")
            }
            let receiverIndex = Int(uint16(start + 8))
            guard receiverIndex < receivers.count else {
                throw Failure(field: "sightings[\(index)].receiver", offset: start + 8,
                              expected: "an index below the \(receivers.count) receivers", found: "\(receiverIndex)")
            }
            let address = UInt64(uint16(start + 10)) << 32 | UInt64(uint32(start + 12))
            let rawRSSI = Int8(bitPattern: byte(start + 16))
            let kind = byte(start + 17)
            offset = start + recordPrefixLength
            let frame: BeaconFrame
            switch FrameKind(rawValue: kind) {
            case .iBeacon:
                try need(iBeaconBodyLength, "sightings[\(index)].frame", "an iBeacon body")
                let uuid = bytes.loadUnaligned(fromByteOffset: offset, as: uuid_t.self)
                let identity = BeaconIdentity(uuid: UUID(uuid: uuid), major: uint16(offset + 16), minor: uint16(offset + 18))
                frame = .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(Int8(bitPattern: byte(offset + 20)))))
                offset += iBeaconBodyLength
            case .advertisingData:
                try need(1, "sightings[\(index)].frame", "an advertising data length")
                let length = Int(byte(offset))
                try need(1 + length, "sightings[\(index)].frame", "\(length) bytes of advertising data")
                let data = Array(bytes[(offset + 1)..<(offset + 1 + length)])
                let frames: [BeaconFrame]
                do {
                    frames = try BeaconFrame.decodeAll(advertisingData: data)
                } catch {
                    throw Failure(field: "sightings[\(index)].frame.\(error.field)", offset: offset + 1 + error.offset,
                                  expected: error.expected, found: error.found)
                }
                guard let first = frames.first else {
                    throw Failure(field: "sightings[\(index)].frame", offset: offset + 1,
                                  expected: "advertising data carrying an iBeacon, AltBeacon or Eddystone frame", found: "none")
                }
                frame = first
                offset += 1 + length
            case nil:
                throw Failure(field: "sightings[\(index)].frame.kind", offset: start + 17,
                              expected: "1 (iBeacon) or 2 (advertising data)", found: "\(kind)")
            }
            return Sighting(time: time, receiver: receivers[receiverIndex], address: BluetoothAddress(rawValue: address),
                            rssi: rawRSSI == rssiNotAvailable ? nil : rawRSSI, frame: frame)
        }
    }
}
