import BeaconKit
import BeaconLocate

/// The server's own tracker (BeaconLocate's `SiteTracker`) as a row of `proxima evaluate`: one on the scenario's
/// map hears every simulated sighting as the gateway (or the walker's phone) that reported it,
/// so the server's rooms are scored against the simulator's truth end to end: calibration
/// refits, one-second cycles and all. `surveys` (the evaluation's simulated phone and tag
/// surveys) go into the map, as an operator would upload them.
public struct SiteTrackerRoomDecider: Sendable {
    public let labels: [LocationReport.Direction: String]
    private var tracker: SiteTracker
    private let tagNames: [BeaconIdentity: String]

    /// `labels` names the rows this tracker fills; a direction without a label is not scored.
    public init(scenario: Scenario, configuration: SiteTracker.Configuration, labels: [LocationReport.Direction: String], surveys: LocationSurveys = LocationSurveys()) {
        self.labels = labels
        var map = scenario.siteMap
        map.survey = surveys.phones
        map.tagSurvey = surveys.tags
        tracker = SiteTracker(map: map, configuration: configuration)
        tagNames = Dictionary(scenario.beacons.filter { $0.path != nil }.map { ($0.identity, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// What `proxima serve` runs by default; with `--phone-room-particles` at the evaluation's
    /// particle count (phones only: the option changes nothing for tags); with the
    /// calibration's priors as weak as the library's, as the server had them before; on a map
    /// that carries the evaluation's simulated phone survey, with and without particles (carried
    /// beacons keep the fixed links' fit); and on a map with the phone and the tag survey (the
    /// carried beacons' decider then weighs fingerprints too).
    public static func evaluated() -> [@Sendable (Scenario, LocationSurveys) -> SiteTrackerRoomDecider] {
        let particles = RoomDecider.Configuration.serverParticles
        return [
            { scenario, _ in SiteTrackerRoomDecider(scenario: scenario, configuration: SiteTracker.Configuration(),
                                     labels: [.phones: defaultLabel, .tags: defaultLabel]) },
            { scenario, _ in SiteTrackerRoomDecider(scenario: scenario, configuration: SiteTracker.Configuration(phoneRooms: .serverPhones(particles: particles)),
                                     labels: [.phones: particlesLabel(particles)]) },
            { scenario, _ in SiteTrackerRoomDecider(scenario: scenario, configuration: SiteTracker.Configuration(calibrationPriors: .weak),
                                     labels: [.phones: weakPriorsLabel, .tags: weakPriorsLabel]) },
            { scenario, surveys in SiteTrackerRoomDecider(scenario: scenario, configuration: SiteTracker.Configuration(),
                                                          labels: [.phones: surveyLabel, .tags: surveyLabel], surveys: LocationSurveys(phones: surveys.phones)) },
            { scenario, surveys in SiteTrackerRoomDecider(scenario: scenario, configuration: SiteTracker.Configuration(phoneRooms: .serverPhones(particles: particles)),
                                                          labels: [.phones: surveyParticlesLabel(particles)], surveys: LocationSurveys(phones: surveys.phones)) },
            { scenario, surveys in SiteTrackerRoomDecider(scenario: scenario, configuration: SiteTracker.Configuration(),
                                                          labels: [.tags: tagSurveyLabel], surveys: surveys) },
        ]
    }

    public static let defaultLabel = "server's tracker (proxima serve)"
    public static func particlesLabel(_ particles: Int) -> String { "server's tracker, --phone-room-particles \(particles)" }
    public static let weakPriorsLabel = "server's tracker, weak calibration priors (before)"
    public static let surveyLabel = "server's tracker, map with the survey"
    public static let tagSurveyLabel = "server's tracker, map with the tag survey"
    public static func surveyParticlesLabel(_ particles: Int) -> String { "server's tracker, map with the survey, --phone-room-particles \(particles)" }

    public mutating func receive(_ sighting: Sighting) -> [SiteTrackerRoomChange] {
        translate(tracker.receive([sighting], gateway: sighting.receiver))
    }

    public mutating func advance(to time: Double) -> [SiteTrackerRoomChange] {
        translate(tracker.advance(to: time))
    }

    private func translate(_ changes: [SubjectRoomChange]) -> [SiteTrackerRoomChange] {
        changes.compactMap { change in
            let room = change.kind == .enter ? change.room : nil
            switch change.subject {
            case .beacon(let identity):
                guard let name = tagNames[identity] else { return nil }
                return SiteTrackerRoomChange(direction: .tags, subject: name, room: room, time: change.time)
            case .phone(let name):
                return SiteTrackerRoomChange(direction: .phones, subject: name, room: room, time: change.time)
            }
        }
    }
}
