import BeaconKit
import Foundation

/// A parsed JSON document, kept as plain values so that scenario validation can walk it and name
/// the path of every field it refuses (`beacons[2].position.x`).
public indirect enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Double.self) { self = .number(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    /// How the value reads in an error message: strings quoted, containers by kind.
    var shortDescription: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .string(let value): "\"\(value.count > 40 ? String(value.prefix(40)) + "…" : value)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A scenario that cannot be used (BeaconKit's JSON-path error, shared with site maps).
public typealias ScenarioError = DocumentFieldError

/// A position inside a JSON document, with typed accessors that throw `ScenarioError`s naming
/// the path. Unknown keys are refused too, because a misspelt optional key would otherwise be
/// silently ignored and the default used instead.
struct JSONCursor {
    let value: JSONValue
    let path: String

    static func parse(_ data: Data) throws(ScenarioError) -> JSONCursor {
        do {
            return JSONCursor(value: try JSONDecoder().decode(JSONValue.self, from: data), path: "")
        } catch {
            throw ScenarioError(path: "", expected: "a JSON document", found: "invalid JSON (\(syntaxErrorDescription(data)))")
        }
    }

    /// JSONDecoder does not say where a document breaks; JSONSerialization gives a character
    /// offset, which is turned into a line and column here.
    private static func syntaxErrorDescription(_ data: Data) -> String {
        let detail: String
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return "a value the scenario reader cannot represent, or nesting too deep"
        } catch {
            detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        }
        guard let range = detail.range(of: "character "),
              let offset = Int(detail[range.upperBound...].prefix { $0.isNumber }) else { return detail }
        var line = 1, column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        return "line \(line), column \(column): \(detail)"
    }

    func child(_ key: String) -> JSONCursor? {
        guard case .object(let members) = value, let member = members[key], member != .null else { return nil }
        return JSONCursor(value: member, path: path.isEmpty ? key : "\(path).\(key)")
    }

    func required(_ key: String) throws(ScenarioError) -> JSONCursor {
        guard case .object = value else { throw ScenarioError(path: path, expected: "an object", found: value.shortDescription) }
        guard let member = child(key) else {
            throw ScenarioError(path: path.isEmpty ? key : "\(path).\(key)", expected: "a value", found: "nothing (the field is required)")
        }
        return member
    }

    func object(allowing keys: Set<String>) throws(ScenarioError) -> JSONCursor {
        guard case .object(let members) = value else { throw ScenarioError(path: path, expected: "an object", found: value.shortDescription) }
        if let unknown = members.keys.sorted().first(where: { !keys.contains($0) }) {
            throw ScenarioError(path: path.isEmpty ? unknown : "\(path).\(unknown)",
                                expected: "one of the keys \(keys.sorted().joined(separator: ", "))", found: "an unknown key")
        }
        return self
    }

    func elements() throws(ScenarioError) -> [JSONCursor] {
        guard case .array(let items) = value else { throw ScenarioError(path: path, expected: "an array", found: value.shortDescription) }
        return items.enumerated().map { JSONCursor(value: $0.element, path: "\(path)[\($0.offset)]") }
    }

    func number(in range: ClosedRange<Double> = -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) throws(ScenarioError) -> Double {
        guard case .number(let number) = value, number.isFinite else {
            throw ScenarioError(path: path, expected: "a number", found: value.shortDescription)
        }
        guard range.contains(number) else {
            throw ScenarioError(path: path, expected: "a number in \(Self.format(range.lowerBound))…\(Self.format(range.upperBound))",
                                found: value.shortDescription)
        }
        return number
    }

    func integer(in range: ClosedRange<Int>) throws(ScenarioError) -> Int {
        let number = try self.number()
        guard number == number.rounded(), let integer = Int(exactly: number), range.contains(integer) else {
            throw ScenarioError(path: path, expected: "an integer in \(range.lowerBound)…\(range.upperBound)", found: value.shortDescription)
        }
        return integer
    }

    func string() throws(ScenarioError) -> String {
        guard case .string(let text) = value else { throw ScenarioError(path: path, expected: "a string", found: value.shortDescription) }
        return text
    }

    func bool() throws(ScenarioError) -> Bool {
        guard case .bool(let flag) = value else { throw ScenarioError(path: path, expected: "true or false", found: value.shortDescription) }
        return flag
    }

    // Optional-field helpers: the default when absent, a path-naming error when present but wrong.
    func number(_ key: String, default fallback: Double, in range: ClosedRange<Double> = -1e12...1e12) throws(ScenarioError) -> Double {
        guard let member = child(key) else { return fallback }
        return try member.number(in: range)
    }

    func bool(_ key: String, default fallback: Bool) throws(ScenarioError) -> Bool {
        guard let member = child(key) else { return fallback }
        return try member.bool()
    }

    func string(_ key: String) throws(ScenarioError) -> String? {
        guard let member = child(key) else { return nil }
        return try member.string()
    }

    private static func format(_ value: Double) -> String {
        if value <= -1e11 { return "-∞" }
        if value >= 1e11 { return "∞" }
        return value == value.rounded() ? String(Int64(value)) : String(value)
    }
}
