/// One AD structure of advertising data: `length type value…`, where length counts the type byte
/// and the value (Core Specification Vol 3, Part C, 11).
public struct ADStructure: Sendable, Hashable {
    public var type: ADType
    public var value: [UInt8]
    /// Where the structure's length byte sits in the advertising data.
    public var offset: Int

    public init(type: ADType, value: [UInt8], offset: Int = 0) {
        self.type = type
        self.value = value
        self.offset = offset
    }

    /// Reads every AD structure of the chain. A zero length byte ends the significant part;
    /// everything after it must be zero padding.
    public static func readAll(_ advertisingData: [UInt8]) throws(DecodeError) -> [ADStructure] {
        try advertisingData.withDecodingBuffer { (buffer) throws(DecodeError) -> [ADStructure] in
            var structures: [ADStructure] = []
            try ADChain.walk(buffer) { (type, range) throws(DecodeError) in
                structures.append(ADStructure(type: type, value: buffer.getBytes(range), offset: range.lowerBound - 2))
            }
            return structures
        }
    }

    /// The structure on the air: length, type, value.
    public var bytes: [UInt8] { [UInt8(value.count + 1), type.rawValue] + value }
}

/// Builds advertising data one AD structure at a time.
public struct ADWriter: Sendable, Hashable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// Appends `length type value`. A value longer than 254 bytes cannot be expressed by one
    /// length byte and is a programming error.
    public mutating func append(_ type: ADType, _ value: some Collection<UInt8>) {
        precondition(value.count <= 254, "an AD structure value holds at most 254 bytes")
        bytes.append(UInt8(value.count + 1))
        bytes.append(type.rawValue)
        bytes.append(contentsOf: value)
    }

    public mutating func appendFlags(_ flags: UInt8) { append(.flags, [flags]) }

    public mutating func appendManufacturerData(company: CompanyIdentifier, payload: some Collection<UInt8>) {
        append(.manufacturerSpecificData, [UInt8(company.rawValue & 0xFF), UInt8(company.rawValue >> 8)] + Array(payload))
    }
}

/// Manufacturer-specific data: a company identifier and the company's own bytes.
public struct ManufacturerData: Sendable, Hashable {
    public var company: CompanyIdentifier
    public var payload: [UInt8]

    public init(company: CompanyIdentifier, payload: [UInt8]) {
        self.company = company
        self.payload = payload
    }

    /// Splits the value of a manufacturer-specific AD structure. Fewer than two bytes cannot hold
    /// the company identifier.
    public init(value: some Collection<UInt8>) throws(DecodeError) {
        let bytes = Array(value)
        guard bytes.count >= 2 else {
            throw DecodeError(field: "manufacturer data company id", offset: 0, expected: "2 bytes",
                              found: "\(bytes.count) byte\(bytes.count == 1 ? "" : "s")")
        }
        self.init(company: CompanyIdentifier(rawValue: UInt16(bytes[1]) << 8 | UInt16(bytes[0])),
                  payload: Array(bytes[2...]))
    }

    /// The value of the AD structure: company id little-endian, then the payload.
    public var bytes: [UInt8] { [UInt8(company.rawValue & 0xFF), UInt8(company.rawValue >> 8)] + payload }

    /// Every manufacturer-specific structure of some advertising data.
    public static func all(in advertisingData: [UInt8]) throws(DecodeError) -> [ManufacturerData] {
        var found: [ManufacturerData] = []
        for structure in try ADStructure.readAll(advertisingData) where structure.type == .manufacturerSpecificData {
            do {
                found.append(try ManufacturerData(value: structure.value))
            } catch {
                throw error.shifted(by: structure.offset + 2)
            }
        }
        return found
    }
}

/// Walks AD structures for the slow, value-building readers. `FrameScanner` has its own copy of
/// the walk, specialised for beacons.
enum ADChain {
    /// Calls `body` with each structure's type and the range of its value in `buffer`.
    static func walk(_ buffer: UnsafeRawBufferPointer,
                     _ body: (ADType, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        var position = 0
        let end = buffer.count
        while position < end {
            let length = Int(buffer[position])
            if length == 0 {
                try DecodeFailure.checkPadding(buffer, from: position + 1, to: end)
                return
            }
            guard length < end - position else {
                throw DecodeFailure.adLength(at: position, length: length, left: end - position - 1)
            }
            try body(ADType(rawValue: buffer[position + 1]), (position + 2)..<(position + 1 + length))
            position += 1 + length
        }
    }
}

extension DecodeError {
    /// The same error, with its offset moved from a part's start to the whole input's start.
    public func shifted(by distance: Int) -> DecodeError {
        DecodeError(field: field, offset: offset + distance, expected: expected, found: found)
    }
}
