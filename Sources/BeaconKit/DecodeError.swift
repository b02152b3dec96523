/// A frame that claims a format but breaks its rules. It says which field, at which byte offset
/// of the input, what the format requires there, and what the bytes held instead.
public struct DecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    public var field: String
    public var offset: Int
    public var expected: String
    public var found: String

    public init(field: String, offset: Int, expected: String, found: String) {
        self.field = field
        self.offset = offset
        self.expected = expected
        self.found = found
    }

    public var description: String { "\(field) at byte \(offset): expected \(expected), found \(found)" }
}
