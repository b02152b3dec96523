import Foundation

/// The default room decider (issue 10): a ``RoomFilter`` fed every cycle by the signal model's
/// likelihood of each room (``SignalRoomLikelihood``, no fix needed) times the likelihood of
/// the fixes of a few methods (``RoomLikelihood``). It runs its own locators for those methods,
/// so it decides rooms the same way whatever method a caller prints positions with.
///
/// `docs/evaluation.md` has the designs compared and the figures that chose this one.
public struct RoomDecider: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Whether the signal model's room likelihood is part of the evidence.
        public var signal: Bool
        /// Power the signal model's room likelihood is raised to (``SignalRoomLikelihood``).
        public var temperature: Double
        /// Methods whose fixes are part of the evidence (fingerprints only with a survey).
        public var methods: [LocateMethod]
        /// Spread (m) of the fix likelihoods.
        public var spread: Double
        public var filter: RoomFilter.Configuration

        public init(signal: Bool = true, temperature: Double = 1, methods: [LocateMethod] = [.particle, .fingerprint, .trilateration],
                    spread: Double = 0.5, filter: RoomFilter.Configuration = RoomFilter.Configuration(switchRate: 0.5, threshold: 0.93)) {
            self.signal = signal
            self.temperature = temperature
            self.methods = methods
            self.spread = spread
            self.filter = filter
        }

        /// The default: signal model (temperature 1) and the particle filter's, fingerprints' and
        /// trilateration's fixes, announcing a room at belief 0.93.
        public static let standard = Configuration()
    }

    public let configuration: Configuration
    public let map: SiteMap
    private var filter: RoomFilter
    private var locators: [LocateMethod: ScanLocator] = [:]
    private let signal: SignalRoomLikelihood?
    private let fixLikelihood: RoomLikelihood

    /// `map`'s beacons are the anchors (for carried beacons located from gateways: the
    /// gateways, each at the tag's power plus its gain). The estimators model the map's walls.
    public init(map: SiteMap, model: PathLossModel, survey: [SurveyPoint] = [], configuration: Configuration = .standard) {
        self.configuration = configuration
        self.map = map
        filter = RoomFilter(rooms: map.rooms, doors: map.doors, configuration: configuration.filter)
        fixLikelihood = RoomLikelihood(rooms: map.rooms, spread: configuration.spread)
        for method in configuration.methods where method != .fingerprint || !survey.isEmpty {
            locators[method] = ScanLocator(method: method, map: map, model: model, survey: survey, attenuatingWalls: true)
        }
        let anchors = locators.values.first?.anchors ?? AnchorSet(map: map, model: model, attenuatingWalls: true)
        signal = configuration.signal && !map.rooms.isEmpty ? SignalRoomLikelihood(rooms: map.rooms, anchors: anchors) : nil
    }

    public func room(of subject: String) -> String? { filter.room(of: subject) }

    /// One cycle of `subject`'s readings (raw RSSI, the mean per anchor; `receiver`'s gain is
    /// taken off here, as ``ScanLocator`` does).
    public mutating func observe(subject: String, readings: [Reading], receiver: String, time: Double) -> [RoomEvent] {
        guard !map.rooms.isEmpty, !readings.isEmpty else { return [] }
        var fixes: [LocateMethod: Fix] = [:]
        for method in configuration.methods {
            guard var locator = locators[method] else { continue }
            locators[method] = nil
            fixes[method] = locator.locate(readings, receiver: subject, at: time)
            locators[method] = locator
        }
        let gain = locators.values.first?.anchors.model.gain(of: receiver) ?? 0
        let corrected = gain == 0 ? readings : readings.map { Reading(beacon: $0.beacon, rssi: $0.rssi - gain) }
        return observe(subject: subject, fixes: fixes, correctedReadings: corrected, time: time)
    }

    /// One cycle from fixes a caller already has (keyed by method; those not in the
    /// configuration are ignored) and readings already corrected by the receiver's gain.
    public mutating func observe(subject: String, fixes: [LocateMethod: Fix], correctedReadings: [Reading], time: Double) -> [RoomEvent] {
        guard let likelihoods = likelihoods(fixes: fixes, correctedReadings: correctedReadings) else { return [] }
        return filter.observe(subject: subject, likelihoods: likelihoods, time: time)
    }

    /// The product of the cycle's evidence per room, nil when it has none.
    public func likelihoods(fixes: [LocateMethod: Fix], correctedReadings: [Reading]) -> [Double]? {
        guard !map.rooms.isEmpty else { return nil }
        var combined = [Double](repeating: 1, count: map.rooms.count)
        var used = 0
        if let signal, let logs = signal.logLikelihoods(of: correctedReadings) {
            let values = SignalRoomLikelihood.likelihoods(logs: logs, temperature: configuration.temperature, outlierShare: signal.outlierShare)
            for room in combined.indices { combined[room] *= values[room] }
            used += 1
        }
        for method in configuration.methods {
            guard let fix = fixes[method] else { continue }
            let values = fixLikelihood.likelihoods(of: fix.position)
            for room in combined.indices { combined[room] *= values[room] }
            used += 1
        }
        return used > 0 ? combined : nil
    }

    /// Subjects without a cycle for the filter's `absence` leave their rooms.
    public mutating func advance(to time: Double) -> [RoomEvent] { filter.advance(to: time) }
}
