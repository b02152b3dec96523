/// A refused rotation setting: the field it came from and why, in words a person can act on.
public struct RotationInputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var field: String
    public var reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(field): \(reason)" }
}
