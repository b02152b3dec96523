/// Everything that tunes monitoring and ranging. Defaults follow Core Location where it is
/// documented and the measurements in docs/monitoring-and-ranging.md where it is not.
public struct EngineConfiguration: Sendable, Hashable {
    /// When a silent beacon is gone.
    public var exitRule: ExitRule
    /// Packets a beacon must send before it counts as present (1 = enter on the first packet).
    /// Packets count only while they keep arriving within the exit timeout of each other.
    public var entryEvidence: Int
    /// Most monitored regions at once; nil = no limit. Core Location allows 20 per app.
    public var regionLimit: Int?
    /// Seconds per ranging cycle.
    public var rangingCycle: Double
    /// Seconds a beacon stays in ranging lists (with proximity unknown) after its last packet.
    public var trackingAge: Double
    public var filter: RSSIFilter
    public var distance: DistanceConfiguration
    public var zones: ProximityZones
    /// Seconds between scans for silent beacons when time advances without their packets. It
    /// bounds how late an exit can be reported beyond its timeout.
    public var exitCheckInterval: Double

    /// Core Location's per-app limit on monitored regions.
    public static let coreLocationRegionLimit = 20

    public init(exitRule: ExitRule = .default, entryEvidence: Int = 1, regionLimit: Int? = nil,
                rangingCycle: Double = 1, trackingAge: Double = 5, filter: RSSIFilter = .default,
                distance: DistanceConfiguration = .init(), zones: ProximityZones = .default,
                exitCheckInterval: Double = 0.1) {
        self.exitRule = exitRule
        self.entryEvidence = max(1, entryEvidence)
        self.regionLimit = regionLimit
        self.rangingCycle = rangingCycle > 0 ? rangingCycle : 1
        self.trackingAge = max(0, trackingAge)
        self.filter = filter
        self.distance = distance
        self.zones = zones
        self.exitCheckInterval = exitCheckInterval > 0 ? exitCheckInterval : 0.1
    }
}

/// What the per-packet path reads of the configuration, converted once. Plain numbers only, so
/// that the packet path can take it by value without copying anything that is not read.
struct PacketRule: Sendable {
    enum FilterKind: UInt8, Sendable { case kalman, window, arma, none }
    var filterKind: FilterKind
    var processNoise: Float = 0
    var measurementNoise: Float = 0
    var armaCoefficient: Float = 0
    var adaptive: AdaptiveExitParameters?
    /// The evidence rule's parameters as Floats, read in place by the packet path (binding an
    /// optional `EvidenceExitParameters` would copy the whole struct per packet).
    var usesEvidence = false
    var evidenceHot = EvidenceHot(.default)
    var fixedDelay: Double = 0
    var entryEvidence: UInt16

    init(_ configuration: EngineConfiguration) {
        switch configuration.filter {
        case .kalman(let parameters):
            filterKind = .kalman
            processNoise = Float(parameters.processNoise)
            measurementNoise = Float(parameters.measurementNoise)
        case .runningTrimmedMean:
            filterKind = .window
        case .arma(let coefficient):
            filterKind = .arma
            armaCoefficient = Float(coefficient)
        case .none:
            filterKind = .none
        }
        switch configuration.exitRule {
        case .adaptive(let parameters): adaptive = parameters
        case .fixedDelay(let seconds): fixedDelay = seconds
        case .evidence(let parameters):
            usesEvidence = true
            evidenceHot = EvidenceHot(parameters)
        }
        entryEvidence = UInt16(clamping: configuration.entryEvidence)
    }
}

/// The configuration reduced to the numbers the engine reads per packet and per cycle, converted once.
///
/// An immutable object rather than a struct inside the engine: the packet path and the ranging
/// cycle update records that are out of `self` while they read these numbers, and with a struct
/// the compiler copied the parameters (226 bytes per packet) or the whole engine (904 bytes per
/// ranged beacon) onto the stack first. The fields of an immutable object are read in place.
final class HotParameters: Sendable {
    let packet: PacketRule
    let evidence: EvidenceExitParameters?
    /// Copied out so the cycle loop does not retain the configuration's override dictionaries.
    let distanceModel: DistanceModel
    /// The robust model's precomputed form, when it is the model.
    let robust: RobustRangingCoefficients?
    let zones: ProximityZones

    init(_ configuration: EngineConfiguration) {
        packet = PacketRule(configuration)
        distanceModel = configuration.distance.model
        robust = RobustRangingCoefficients(configuration.distance.model)
        zones = configuration.zones
        if case .evidence(let parameters) = configuration.exitRule { evidence = parameters } else { evidence = nil }
    }
}
