import BeaconLocate

/// A whole ``RoomDecider`` the location evaluation runs as one row: its own locators and
/// filter, without a survey, on the same cycles as the room filters.
struct RoomDeciderRow: Sendable, Hashable {
    var label: String
    var configuration: RoomDecider.Configuration

    /// The default decider of `direction` with ``RoomDecider/Configuration/serverParticles``
    /// particles, at most 100 signal cells a room and no survey: what a server, which keeps
    /// many subjects and has no survey, could run (the server runs ``RoomDecider/Configuration/tagsWithoutParticles`` and ``RoomDecider/Configuration/phonesWithoutParticles`` today).
    static func evaluated(_ direction: LocationReport.Direction) -> [RoomDeciderRow] {
        let particles = RoomDecider.Configuration.serverParticles
        return [RoomDeciderRow(label: LocationReport.noSurveyParticlesRoomDecider(particles),
                               configuration: direction == .phones ? .serverPhones(particles: particles) : .serverTags(particles: particles))]
    }
}
