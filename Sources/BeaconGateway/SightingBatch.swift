import BeaconKit

/// The body of `POST /v1/sightings`: up to 5,000 sightings in BeaconKit's JSON form
/// (`{"time","receiver","address","rssi","frame":{"format":"iBeacon",...}}`), with an optional
/// sequence number the gateway increments per batch so a retried batch is not counted twice.
///
/// The wire type lives here so a gateway encodes exactly what the server decodes without
/// linking the server; the server adds its validation in an extension.
public struct SightingBatch: Sendable, Codable {
    /// The RSSI a Bluetooth controller reports (Core Specification, HCI LE Advertising Report:
    /// −127…+20 dBm; 127 means "not available" and travels as null). Every batch form and the
    /// edge form's readings hold to it.
    public static let rssiRange = -127...20

    public var sequence: Int?
    public var sightings: [Sighting]

    public init(sequence: Int?, sightings: [Sighting]) {
        self.sequence = sequence
        self.sightings = sightings
    }
}
