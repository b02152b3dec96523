/// A MessagePack value, as far as gateway uploads need: every type of the format
/// (https://github.com/msgpack/msgpack/blob/master/spec.md) except that extension values keep
/// only their type and bytes.
public indirect enum MessagePackValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case binary([UInt8])
    case array([MessagePackValue])
    case map([(key: MessagePackValue, value: MessagePackValue)])
    case extended(type: Int8, data: [UInt8])

    public static func == (lhs: MessagePackValue, rhs: MessagePackValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.int(a), .int(b)): a == b
        case let (.uint(a), .uint(b)): a == b
        case let (.double(a), .double(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.binary(a), .binary(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.map(a), .map(b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case let (.extended(t1, d1), .extended(t2, d2)): t1 == t2 && d1 == d2
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .int(let value): hasher.combine(value)
        case .uint(let value): hasher.combine(value)
        case .double(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .binary(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .map(let pairs): for pair in pairs { hasher.combine(pair.key); hasher.combine(pair.value) }
        case .extended(let type, let data): hasher.combine(type); hasher.combine(data)
        }
    }

    /// The value of a string key in a map.
    public subscript(key: String) -> MessagePackValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .string(key) }?.value
    }
}

/// Reads one MessagePack value from untrusted bytes. Bounded: a container's count is checked
/// against the bytes left (every element takes at least one), nesting stops at ``maxDepth``,
/// and at most ``maxValues`` values are built, so a hostile body costs time and memory in
/// proportion to its length, capped well below it.
public struct MessagePackReader {
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var offset: Int
        public var expected: String
        public var found: String
        public var description: String { "MessagePack at offset \(offset): expected \(expected), found \(found)" }
    }

    public var maxDepth = 16
    public var maxValues = 100_000
    private let bytes: [UInt8]
    private var offset = 0
    private var values = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The single value the bytes hold; trailing bytes are an error.
    public static func read(_ bytes: [UInt8]) throws(Failure) -> MessagePackValue {
        var reader = MessagePackReader(bytes)
        let value = try reader.value(depth: 0)
        guard reader.offset == bytes.count else {
            throw Failure(offset: reader.offset, expected: "the end of the data", found: "\(bytes.count - reader.offset) more bytes")
        }
        return value
    }

    private func need(_ count: Int, _ what: String) throws(Failure) {
        guard bytes.count - offset >= count else {
            throw Failure(offset: offset, expected: "\(what) (\(count) bytes)", found: "only \(bytes.count - offset)")
        }
    }

    private mutating func unsigned(_ width: Int) throws(Failure) -> UInt64 {
        try need(width, "a \(width * 8)-bit number")
        var result: UInt64 = 0
        for byte in bytes[offset..<(offset + width)] { result = result << 8 | UInt64(byte) }
        offset += width
        return result
    }

    private mutating func raw(_ count: Int, _ what: String) throws(Failure) -> [UInt8] {
        try need(count, what)
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    private mutating func string(_ count: Int) throws(Failure) -> MessagePackValue {
        let start = offset
        let data = try raw(count, "string bytes")
        guard let text = String(validating: data, as: UTF8.self) else {
            throw Failure(offset: start, expected: "UTF-8 text", found: "invalid UTF-8")
        }
        return .string(text)
    }

    private mutating func elements(_ count: Int, pairs: Bool, depth: Int) throws(Failure) -> MessagePackValue {
        guard depth < maxDepth else { throw Failure(offset: offset, expected: "at most \(maxDepth) nested containers", found: "more") }
        let needed = pairs ? count * 2 : count
        guard needed <= bytes.count - offset else {
            throw Failure(offset: offset, expected: "\(needed) values", found: "only \(bytes.count - offset) bytes left")
        }
        if pairs {
            var result: [(key: MessagePackValue, value: MessagePackValue)] = []
            result.reserveCapacity(count)
            for _ in 0..<count { result.append((try value(depth: depth + 1), try value(depth: depth + 1))) }
            return .map(result)
        }
        var result: [MessagePackValue] = []
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(try value(depth: depth + 1)) }
        return .array(result)
    }

    mutating func value(depth: Int) throws(Failure) -> MessagePackValue {
        try need(1, "a value")
        values += 1
        guard values <= maxValues else { throw Failure(offset: offset, expected: "at most \(maxValues) values", found: "more") }
        let marker = bytes[offset]
        offset += 1
        switch marker {
        case 0x00...0x7F: return .uint(UInt64(marker))
        case 0x80...0x8F: return try elements(Int(marker & 0x0F), pairs: true, depth: depth)
        case 0x90...0x9F: return try elements(Int(marker & 0x0F), pairs: false, depth: depth)
        case 0xA0...0xBF: return try string(Int(marker & 0x1F))
        case 0xC0: return .null
        case 0xC2: return .bool(false)
        case 0xC3: return .bool(true)
        case 0xC4, 0xC5, 0xC6: return .binary(try raw(Int(try unsigned(1 << Int(marker - 0xC4))), "binary bytes"))
        case 0xC7, 0xC8, 0xC9:
            let count = Int(try unsigned(1 << Int(marker - 0xC7)))
            let type = Int8(bitPattern: UInt8(try unsigned(1)))
            return .extended(type: type, data: try raw(count, "extension bytes"))
        case 0xCA: return .double(Double(Float(bitPattern: UInt32(try unsigned(4)))))
        case 0xCB: return .double(Double(bitPattern: try unsigned(8)))
        case 0xCC, 0xCD, 0xCE, 0xCF: return .uint(try unsigned(1 << Int(marker - 0xCC)))
        case 0xD0: return .int(Int64(Int8(truncatingIfNeeded: try unsigned(1))))
        case 0xD1: return .int(Int64(Int16(truncatingIfNeeded: try unsigned(2))))
        case 0xD2: return .int(Int64(Int32(truncatingIfNeeded: try unsigned(4))))
        case 0xD3: return .int(Int64(bitPattern: try unsigned(8)))
        case 0xD4, 0xD5, 0xD6, 0xD7, 0xD8:
            let type = Int8(bitPattern: UInt8(try unsigned(1)))
            return .extended(type: type, data: try raw(1 << Int(marker - 0xD4), "extension bytes"))
        case 0xD9, 0xDA, 0xDB: return try string(Int(try unsigned(1 << Int(marker - 0xD9))))
        case 0xDC, 0xDD: return try elements(Int(try unsigned(2 << Int(marker - 0xDC))), pairs: false, depth: depth)
        case 0xDE, 0xDF: return try elements(Int(try unsigned(2 << Int(marker - 0xDE))), pairs: true, depth: depth)
        case 0xE0...0xFF: return .int(Int64(Int8(bitPattern: marker)))
        default:
            throw Failure(offset: offset - 1, expected: "a MessagePack type byte", found: "0xc1 (never used)")
        }
    }
}
