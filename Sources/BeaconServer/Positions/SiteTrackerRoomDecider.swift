import BeaconKit
import BeaconLocate
import BeaconSimulator

/// The server's own tracker as a row of `proxima evaluate`: a ``SiteTracker`` on the scenario's
/// map hears every simulated sighting as the gateway (or the walker's phone) that reported it,
/// so the server's rooms are scored against the simulator's truth end to end: calibration
/// refits, one-second cycles and all.
public struct SiteTrackerRoomDecider: ExternalRoomDecider {
    public let labels: [LocationReport.Direction: String]
    private var tracker: SiteTracker
    private let tagNames: [BeaconIdentity: String]

    /// `labels` names the rows this tracker fills; a direction without a label is not scored.
    public init(scenario: Scenario, configuration: SiteTracker.Configuration, labels: [LocationReport.Direction: String]) {
        self.labels = labels
        tracker = SiteTracker(map: scenario.siteMap, configuration: configuration)
        tagNames = Dictionary(scenario.beacons.filter { $0.path != nil }.map { ($0.identity, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// What `proxima serve` runs by default; with `--phone-room-particles` at the evaluation's
    /// particle count (phones only: the option changes nothing for tags); and with the
    /// calibration's priors as weak as the library's, as the server had them before.
    public static func evaluated() -> [@Sendable (Scenario) -> any ExternalRoomDecider] {
        let particles = RoomDecider.Configuration.serverParticles
        return [
            { SiteTrackerRoomDecider(scenario: $0, configuration: SiteTracker.Configuration(),
                                     labels: [.phones: defaultLabel, .tags: defaultLabel]) },
            { SiteTrackerRoomDecider(scenario: $0, configuration: SiteTracker.Configuration(phoneRooms: .serverPhones(particles: particles)),
                                     labels: [.phones: particlesLabel(particles)]) },
            { SiteTrackerRoomDecider(scenario: $0, configuration: SiteTracker.Configuration(calibrationPriors: .weak),
                                     labels: [.phones: weakPriorsLabel, .tags: weakPriorsLabel]) },
        ]
    }

    public static let defaultLabel = "server's tracker (proxima serve)"
    public static func particlesLabel(_ particles: Int) -> String { "server's tracker, --phone-room-particles \(particles)" }
    public static let weakPriorsLabel = "server's tracker, weak calibration priors (before)"

    public mutating func receive(_ sighting: Sighting) -> [ExternalRoomChange] {
        translate(tracker.receive([sighting], gateway: sighting.receiver))
    }

    public mutating func advance(to time: Double) -> [ExternalRoomChange] {
        translate(tracker.advance(to: time))
    }

    private func translate(_ changes: [SubjectRoomChange]) -> [ExternalRoomChange] {
        changes.compactMap { change in
            let room = change.kind == .enter ? change.room : nil
            switch change.subject {
            case .beacon(let identity):
                guard let name = tagNames[identity] else { return nil }
                return ExternalRoomChange(direction: .tags, subject: name, room: room, time: change.time)
            case .phone(let name):
                return ExternalRoomChange(direction: .phones, subject: name, room: room, time: change.time)
            }
        }
    }
}
