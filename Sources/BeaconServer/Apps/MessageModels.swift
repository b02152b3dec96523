import Foundation

/// A message of the day: words for the visitors near a zone or a beacon, on a schedule.
/// Exactly one of `zoneID` and `beaconID` is set.
public struct DayMessage: Sendable, Hashable, Codable {
    public enum Format: String, Sendable, Hashable, Codable { case text, html }

    public var id: Int
    public var siteID: Int
    public var zoneID: Int?
    public var beaconID: Int?
    public var format: Format
    /// The text as given, or the HTML after sanitising.
    public var body: String
    public var schedule: MessageSchedule
    public var createdAt: Double
    public var updatedAt: Double

    /// What a phone receives: in an enter event's `message` and from `GET /v1/messages?uuid=`.
    public var delivered: DeliveredMessage { DeliveredMessage(id: id, format: format, body: body) }
}

/// The message as a device receives it.
public struct DeliveredMessage: Sendable, Hashable, Codable {
    public var id: Int
    public var format: DayMessage.Format
    public var body: String
}

/// `POST /v1/messages` and `PUT /v1/messages/{id}`.
public struct NewDayMessage: Sendable, Hashable, Codable {
    public var zoneID: Int?
    public var beaconID: Int?
    public var format: DayMessage.Format?
    public var body: String
    public var schedule: MessageSchedule?

    public init(zoneID: Int? = nil, beaconID: Int? = nil, format: DayMessage.Format? = nil, body: String, schedule: MessageSchedule? = nil) {
        self.zoneID = zoneID
        self.beaconID = beaconID
        self.format = format
        self.body = body
        self.schedule = schedule
    }
}

/// The answer to a create or replace: the stored message and what sanitising left out.
public struct SavedDayMessage: Sendable, Hashable, Codable {
    public var message: DayMessage
    /// Empty for text, and for HTML that needed no cleaning.
    public var removed: [String]
}

/// `GET /v1/messages?uuid=&major=&minor=`: the identity, its registry name when known, and the
/// message that applies now, left out (not null) when none does.
public struct MessageLookup: Sendable, Hashable, Codable {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var label: String?
    public var message: DeliveredMessage?
}
