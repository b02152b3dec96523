import BeaconKit
import Foundation

/// A region event as the server stores and sends it: BeaconKit's event (``BeaconEvent``, the
/// same JSON `proxima monitor --json` prints) with the server's fields beside it, in one flat
/// object, so any reader of BeaconKit's event JSON can read the server's events too:
/// `{"id":…,"gatewayID":…,"siteID":…,"label":…,"event":"enter","time":…,"region":{…}}`.
public struct StoredEvent: Sendable, Hashable, Codable {
    /// Increases with every stored event; the SSE `id:`, `?after=` and `Last-Event-ID` cursor.
    public var id: Int
    /// The gateway whose sightings caused it.
    public var gatewayID: String
    /// The site of the deployed beacon, when the registry knows it.
    public var siteID: Int?
    /// The registry's name for the beacon, or its identity when it is not registered.
    public var label: String
    /// Times are seconds on the gateway's clock.
    public var event: BeaconEvent

    private enum EnvelopeKeys: String, CodingKey { case id, gatewayID, siteID, label }

    public init(id: Int, gatewayID: String, siteID: Int?, label: String, event: BeaconEvent) {
        self.id = id
        self.gatewayID = gatewayID
        self.siteID = siteID
        self.label = label
        self.event = event
    }

    /// The enter or exit of one beacon identity, which is what a gateway's monitor reports:
    /// the region is the exact region of that identity.
    public init(id: Int, gatewayID: String, siteID: Int?, label: String,
                transition: GatewayMonitor.Transition, identity: BeaconIdentity, time: Double) throws {
        let region = try BeaconRegion.exactly(identity)
        let event: BeaconEvent = switch transition {
        case .enter: .didEnter(region, time: time)
        case .exit: .didExit(region, time: time)
        }
        self.init(id: id, gatewayID: gatewayID, siteID: siteID, label: label, event: event)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: EnvelopeKeys.self)
        self.init(id: try container.decode(Int.self, forKey: .id),
                  gatewayID: try container.decode(String.self, forKey: .gatewayID),
                  siteID: try container.decodeIfPresent(Int.self, forKey: .siteID),
                  label: try container.decode(String.self, forKey: .label),
                  event: try BeaconEvent(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: EnvelopeKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(gatewayID, forKey: .gatewayID)
        // Written as null rather than left out, so every event has the same keys.
        try container.encode(siteID, forKey: .siteID)
        try container.encode(label, forKey: .label)
        try event.encode(to: encoder)
    }
}
