import BeaconKit
import BeaconLocate

/// A room change a ``SiteTrackerRoomDecider`` announced, named as the scenario names its subjects.
public struct SiteTrackerRoomChange: Sendable, Hashable {
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
