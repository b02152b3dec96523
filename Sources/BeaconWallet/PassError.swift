/// A refused pass, package or signing input: `field` names where (a JSON path in pass.json such
/// as `beacons[2].proximityUUID`, a file in the package such as `icon.png`, or an input such as
/// `--key`), `reason` says what is wrong in words a pass designer can act on.
public struct PassError: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var reason: String

    public init(_ field: String, _ reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(field): \(reason)" }
}
