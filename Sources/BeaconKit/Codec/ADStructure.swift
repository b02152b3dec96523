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
            try ADChain.walk(buffer, baseOffset: 0) { (type, range) throws(DecodeError) in
                structures.append(ADStructure(type: type, value: buffer.bytes(range), offset: range.lowerBound - 2))
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

/// The AD chain walker that every decoder shares.
enum ADChain {
    /// Calls `body` with each structure's type and the range of its value in `buffer`.
    /// Offsets in errors are `baseOffset` plus the position in `buffer`.
    @inline(__always)
    static func walk(_ buffer: UnsafeRawBufferPointer, baseOffset: Int,
                     _ body: (ADType, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        var position = 0
        let end = buffer.count
        while position < end {
            let length = Int(buffer[position])
            if length == 0 {
                try checkPadding(buffer, from: position + 1, baseOffset: baseOffset)
                return
            }
            let left = end - position - 1
            guard length <= left else {
                throw DecodeError(field: "AD structure length", offset: baseOffset + position,
                                  expected: "at most \(left) (the bytes left)", found: "\(length) (\(hexByte(UInt8(length))))")
            }
            try body(ADType(rawValue: buffer[position + 1]), (position + 2)..<(position + 1 + length))
            position += 1 + length
        }
    }

    /// After the zero length that ends the significant part, only zero padding may follow
    /// (Core Specification Vol 3, Part C, 11).
    static func checkPadding(_ buffer: UnsafeRawBufferPointer, from start: Int, baseOffset: Int) throws(DecodeError) {
        var position = start
        while position < buffer.count {
            guard buffer[position] == 0 else {
                throw DecodeError(field: "AD padding", offset: baseOffset + position,
                                  expected: "0x00 after the zero length that ends the AD structures",
                                  found: hexByte(buffer[position]))
            }
            position += 1
        }
    }
}

extension DecodeError {
    /// The same error, with its offset moved from a part's start to the whole input's start.
    public func shifted(by distance: Int) -> DecodeError {
        DecodeError(field: field, offset: offset + distance, expected: expected, found: found)
    }
}
