import BeaconKit
import BeaconLocate

/// A room decider that lives outside this module (the server's `SiteTracker`), scored by the
/// location evaluation against the same truth as its own rows: it hears every sighting as its
/// receiver reported it, in time order, and says which subjects changed room.
public protocol ExternalRoomDecider: Sendable {
    /// The report row it fills in each direction it decides.
    var labels: [LocationReport.Direction: String] { get }
    mutating func receive(_ sighting: Sighting) -> [ExternalRoomChange]
    /// Moves its clock to the scenario's end (exits after silence).
    mutating func advance(to time: Double) -> [ExternalRoomChange]
}

/// A room change an ``ExternalRoomDecider`` announced, named as the scenario names its subjects.
public struct ExternalRoomChange: Sendable, Hashable {
    public var direction: LocationReport.Direction
    /// The walker's receiver (phones) or the carried beacon (tags), by its scenario name.
    public var subject: String
    /// The room entered; nil when the subject left every room.
    public var room: String?
    public var time: Double

    public init(direction: LocationReport.Direction, subject: String, room: String?, time: Double) {
        self.direction = direction
        self.subject = subject
        self.room = room
        self.time = time
    }
}

/// The surveys the location evaluation simulated for one seed, as a site would upload them in
/// its map: a phone's scans of the fixed beacons (`SiteMap.survey`) and a tag's scans as the
/// gateways heard it (`SiteMap.tagSurvey`, readings by index in the map's receivers).
public struct LocationSurveys: Sendable {
    public var phones: [SurveyPoint]
    public var tags: [TagSurveyPoint]

    public init(phones: [SurveyPoint] = [], tags: [TagSurveyPoint] = []) {
        self.phones = phones
        self.tags = tags
    }
}
