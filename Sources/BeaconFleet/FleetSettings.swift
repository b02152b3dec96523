/// The thresholds of the checks. The defaults are argued in docs/fleet.md.
public struct FleetSettings: Sendable, Hashable {
    /// False "missing" alerts allowed per beacon-hour if reception were a Poisson process; the
    /// silence threshold is the shortest delay that keeps to it, `ln(3600·λ/ε)/λ`.
    public var falseMissingPerHour = 1e-4
    /// Reception is burstier than Poisson (people block, gateways reboot): the threshold is
    /// multiplied by this.
    public var silenceSafetyFactor = 2.0
    /// No beacon is missing after less silence than this, however often it is heard.
    public var minimumSilence = 10.0
    /// A link counts toward a beacon's expected coverage after this many packets…
    public var learningPackets = 20
    /// …and this long since it was first heard.
    public var learningSeconds = 600.0
    /// Links heard less often than this do not count: one packet every five minutes.
    public var minimumExpectedRate = 1.0 / 300
    /// How long the reception rate remembers (exponential forgetting).
    public var rateMemory = 3600.0
    /// A gateway that has not reported for this long is offline; its beacons become unknown.
    public var gatewayTimeout = 30.0
    /// At most this many links per beacon are kept (the strongest by rate).
    public var linksPerBeacon = 16

    /// RSSI at or above this means "right here" for the out-of-place and clone checks.
    public var strongRSSI: Int8 = -70
    /// A beacon heard strongly by a gateway farther than this from its plan position is out of place.
    public var outOfPlaceDistance = 20.0
    /// Two gateways farther apart than this cannot both hear one transmitter strongly.
    public var cloneDistance = 60.0
    /// Strong sightings needed before a place or clone finding is raised.
    public var evidencePackets = 3
    /// How long place and clone findings stay after their last evidence.
    public var evidenceHold = 600.0

    /// Unknown identities remembered at once; beyond this the flood is counted, not stored.
    public var unregisteredLimit = 1000
    /// Unknown identities first heard within `floodWindow` at one gateway that make a flood.
    public var floodIdentities = 50
    public var floodWindow = 60.0
    /// An unknown identity is forgotten after this much silence.
    public var unregisteredMemory = 3600.0

    /// Battery warnings and alerts, in days left.
    public var batteryWarningDays = 30.0
    public var batteryAlertDays = 7.0

    /// Drift: the shift worth an alert (dB) and the CUSUM's decision level (dB·minutes).
    public var driftShift = 4.0
    public var driftDecision = 20.0
    /// Minute means used to learn a link's normal level before drift is watched.
    public var driftLearningMinutes = 30
    /// A shifted level that lasts this long becomes the new normal (the beacon was moved on purpose).
    public var driftAcceptAfter = 86_400.0

    public init() {}
}
