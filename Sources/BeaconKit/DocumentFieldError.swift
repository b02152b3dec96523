/// A JSON document (a scenario, a site map) that cannot be used: which field, as a JSON path such
/// as `rooms[0].polygon[3].y`, what was expected there and what was found.
public struct DocumentFieldError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var expected: String
    public var found: String

    public init(path: String, expected: String, found: String) {
        self.path = path
        self.expected = expected
        self.found = found
    }

    public var description: String {
        "\(path.isEmpty ? "(document)" : path): expected \(expected), found \(found)"
    }
}
