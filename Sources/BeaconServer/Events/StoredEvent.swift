import BeaconGateway
import BeaconKit
import BeaconLocate
import Foundation

/// An event as the server stores and sends it: BeaconKit's event (``BeaconEvent``, the same JSON
/// `proxima monitor --json` prints) or a room change (``RoomOccurrence``), with the server's
/// fields beside it, in one flat object, so any reader of BeaconKit's event JSON can read the
/// server's region events too:
/// `{"id":…,"gatewayID":…,"siteID":…,"label":…,"event":"enter","time":…,"region":{…}}`.
public struct StoredEvent: Sendable, Hashable, Codable {
    /// What happened: a beacon region's enter or exit seen by one gateway, or a subject's room
    /// change decided across a site's gateways.
    public enum Occurrence: Sendable, Hashable {
        case region(BeaconEvent)
        case room(RoomOccurrence)
        /// A fleet-health alert raised, lowered or cleared (Fleet/).
        case fleet(FleetOccurrence)
        /// A device application's decision: a check-in or offers delivered (Apps/).
        case application(ApplicationOccurrence)
    }

    /// Increases with every stored event; the SSE `id:`, `?after=` and `Last-Event-ID` cursor.
    public var id: Int
    /// The gateway whose sightings caused it.
    public var gatewayID: String
    /// The site of the deployed beacon (region events) or of the tracking map (room events),
    /// when known.
    public var siteID: Int?
    /// The registry's name for the beacon, or its identity when it is not registered; a
    /// phone's gateway name for its room events.
    public var label: String
    /// Times are seconds on the gateway's clock.
    public var occurrence: Occurrence
    /// The message of the day delivered with a device's enter event (Apps/); absent, not null,
    /// when none applied.
    public var message: DeliveredMessage?

    private enum EnvelopeKeys: String, CodingKey { case id, gatewayID, siteID, label, event, message }

    public init(id: Int, gatewayID: String, siteID: Int?, label: String, event: BeaconEvent) {
        self.init(id: id, gatewayID: gatewayID, siteID: siteID, label: label, occurrence: .region(event))
    }

    public init(id: Int, gatewayID: String, siteID: Int?, label: String, occurrence: Occurrence) {
        self.id = id
        self.gatewayID = gatewayID
        self.siteID = siteID
        self.label = label
        self.occurrence = occurrence
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

    /// The region event, nil for a room event.
    public var event: BeaconEvent? {
        if case .region(let event) = occurrence { return event }
        return nil
    }

    /// The room change, nil for a region event.
    public var room: RoomOccurrence? {
        if case .room(let room) = occurrence { return room }
        return nil
    }

    /// The fleet alert change, nil for other events.
    public var fleet: FleetOccurrence? {
        if case .fleet(let fleet) = occurrence { return fleet }
        return nil
    }

    /// The application decision, nil for other events.
    public var application: ApplicationOccurrence? {
        if case .application(let application) = occurrence { return application }
        return nil
    }

    /// The `event` key: `enter`, `exit` (regions), `roomEnter`, `roomExit` (rooms), `alertRaised`,
    /// `alertLowered`, `alertCleared` (fleet), `checkIn`, `offersDelivered` (applications); the
    /// SSE `event:` line.
    public var kindName: String {
        switch occurrence {
        case .region(let event): event.kindName
        case .room(let room): room.kind.rawValue
        case .fleet(let fleet): fleet.kind.rawValue
        case .application(let application): application.kind.rawValue
        }
    }

    public var time: Double {
        switch occurrence {
        case .region(let event): event.time
        case .room(let room): room.time
        case .fleet(let fleet): fleet.time
        case .application(let application): application.time
        }
    }

    /// The beacon identity stored in the event's row (what `?region=` matches): the region's,
    /// a room or fleet subject's when it is a beacon, a check-in zone's; nil otherwise.
    var rowIdentity: BeaconIdentity? {
        switch occurrence {
        case .region(let event):
            guard let major = event.region.major, let minor = event.region.minor else { return nil }
            return BeaconIdentity(uuid: event.region.uuid, major: major, minor: minor)
        case .room(let room):
            guard let uuid = room.subject.uuid else { return nil }
            return BeaconIdentity(uuid: uuid, major: room.subject.major ?? 0, minor: room.subject.minor ?? 0)
        case .fleet(let fleet):
            guard let uuid = fleet.subject.uuid else { return nil }
            return BeaconIdentity(uuid: uuid, major: fleet.subject.major ?? 0, minor: fleet.subject.minor ?? 0)
        case .application(let application):
            return application.zoneIdentity
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: EnvelopeKeys.self)
        let kind = try container.decodeIfPresent(String.self, forKey: .event)
        let occurrence: Occurrence = if let kind, RoomOccurrence.Kind(rawValue: kind) != nil {
            .room(try RoomOccurrence(from: decoder))
        } else if let kind, FleetOccurrence.Kind(rawValue: kind) != nil {
            .fleet(try FleetOccurrence(from: decoder))
        } else if let kind, ApplicationOccurrence.Kind(rawValue: kind) != nil {
            .application(try ApplicationOccurrence(from: decoder))
        } else {
            .region(try BeaconEvent(from: decoder))
        }
        self.init(id: try container.decode(Int.self, forKey: .id),
                  gatewayID: try container.decode(String.self, forKey: .gatewayID),
                  siteID: try container.decodeIfPresent(Int.self, forKey: .siteID),
                  label: try container.decode(String.self, forKey: .label),
                  occurrence: occurrence)
        message = try container.decodeIfPresent(DeliveredMessage.self, forKey: .message)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: EnvelopeKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(gatewayID, forKey: .gatewayID)
        // Written as null rather than left out, so every event has the same keys.
        try container.encode(siteID, forKey: .siteID)
        try container.encode(label, forKey: .label)
        try container.encodeIfPresent(message, forKey: .message)
        switch occurrence {
        case .region(let event): try event.encode(to: encoder)
        case .room(let room): try room.encode(to: encoder)
        case .fleet(let fleet): try fleet.encode(to: encoder)
        case .application(let application): try application.encode(to: encoder)
        }
    }
}

/// A subject entering or leaving a room of a site's map, decided by room presence across the
/// site's gateways: `{"event":"roomEnter","time":…,"room":"west","subject":{…}}`.
public struct RoomOccurrence: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable { case roomEnter, roomExit }

    /// Who moved: a carried beacon (`kind` `beacon`, with its identity) or a phone (`kind`
    /// `phone`, named by its gateway). `name` is what `GET /v1/route?from=` takes.
    public struct Subject: Sendable, Hashable, Codable {
        public var kind: String
        public var name: String
        public var uuid: UUID?
        public var major: UInt16?
        public var minor: UInt16?

        public init(_ subject: TrackedSubject) {
            kind = subject.kind
            name = subject.name
            if case .beacon(let identity) = subject {
                uuid = identity.uuid
                major = identity.major
                minor = identity.minor
            }
        }
    }

    public var kind: Kind
    public var time: Double
    public var room: String
    public var subject: Subject

    private enum CodingKeys: String, CodingKey { case kind = "event", time, room, subject }

    public init(kind: Kind, time: Double, room: String, subject: Subject) {
        self.kind = kind
        self.time = time
        self.room = room
        self.subject = subject
    }
}
