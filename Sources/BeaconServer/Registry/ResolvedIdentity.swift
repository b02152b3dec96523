import Foundation

/// The meaning of an identity, as one call returns it.
public struct ResolvedIdentity: Sendable, Hashable, Codable {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var siteID: Int
    public var siteName: String
    public var category: String?
    public var zoneLabel: String?
    /// "Bloomington Office – Conference Room: Mordor"
    public var label: String
    /// Set when the identity asked about was a rotated one (docs/security.md).
    public var rotation: RotationMatch?
}
