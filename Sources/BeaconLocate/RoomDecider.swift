import Foundation

/// The default room decider (issue 10): a ``RoomFilter`` fed every cycle by the product of the
/// signal model's likelihood of each room (``SignalRoomLikelihood``, no fix needed), the
/// particle filter's share of weight in each room (``ParticleFilter/mass(in:)``) and, for
/// carried beacons, the likelihood of a few methods' fixes (``RoomLikelihood``). It runs its own
/// locators, so it decides rooms the same way whatever method a caller prints positions with.
///
/// The defaults differ by direction (``Configuration/phones``, ``Configuration/tags``): a
/// phone's readings carry its user's body (about 10 dB off every beacon behind), so its point
/// fixes jump across walls as the user turns and made the filter flap (1.33 × the true
/// changes); the particle mass, which walls hold and doors let through, and the signal model,
/// which asks each room as a whole, do not. A carried beacon has no body in the way; its fixes
/// follow a change sooner.
///
/// `docs/evaluation.md` has the designs compared and the figures that chose this one.
public struct RoomDecider: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Whether the signal model's room likelihood is part of the evidence.
        public var signal: Bool
        /// Whether the particle filter's share of weight per room is part of the evidence.
        public var particleMass: Bool
        /// Share of the particle mass likelihood spread evenly over the rooms, so that a cloud
        /// wholly in one room does not rule the others out.
        public var massOutlierShare: Double
        /// Power the signal model's room likelihood is raised to (``SignalRoomLikelihood``).
        public var temperature: Double
        /// Cauchy scale (dB) of readings weaker than the signal model predicts; nil: the same as
        /// above (5 dB). A wider one is the one-sided loss of ``SignalRoomLikelihood``.
        public var weakerLossScale: Double?
        /// The user's body in the signal model (``BodyShadow``): for receivers people carry.
        public var body: BodyShadow?
        /// Methods whose fixes are part of the evidence (fingerprints only with a survey).
        public var methods: [LocateMethod]
        /// Spread (m) of the fix likelihoods.
        public var spread: Double
        /// When set, a fix's spread is the larger of `spread` and this share of the fix's own
        /// uncertainty radius, so a fix that its estimator doubts (few readings, a cloud split
        /// across a wall) moves the belief less than a confident one; nil: `spread` for all.
        public var uncertaintySpread: Double?
        public var filter: RoomFilter.Configuration
        /// Most cells of the signal model's grid per room (1 m cells, coarser in larger rooms):
        /// a cycle costs rooms × cells × readings.
        public var signalCells: Int
        /// Particles of each subject's particle filter (about 24 bytes each).
        public var particles: Int
        /// Whether the fingerprint fix weighs the particle filter's particles every cycle, or
        /// only tells a lost cloud where to look (``ScanLocator/fingerprintsWeighParticles``).
        public var fingerprintsWeighParticles: Bool

        public init(signal: Bool = true, particleMass: Bool = true, massOutlierShare: Double = 0.05, temperature: Double = 1,
                    weakerLossScale: Double? = nil, body: BodyShadow? = nil, methods: [LocateMethod] = [.particle, .fingerprint, .trilateration],
                    spread: Double = 0.5, uncertaintySpread: Double? = nil,
                    filter: RoomFilter.Configuration = RoomFilter.Configuration(switchRate: 0.5, threshold: 0.93), signalCells: Int = 400,
                    particles: Int = ParticleFilter.Configuration.defaultParticles, fingerprintsWeighParticles: Bool = true) {
            self.signal = signal
            self.particleMass = particleMass
            self.massOutlierShare = min(max(massOutlierShare, 0), 1)
            self.temperature = temperature
            self.weakerLossScale = weakerLossScale
            self.body = body
            self.methods = methods
            self.spread = spread
            self.uncertaintySpread = uncertaintySpread.map { max(0, $0) }
            self.filter = filter
            self.signalCells = max(1, signalCells)
            self.particles = max(1, particles)
            self.fingerprintsWeighParticles = fingerprintsWeighParticles
        }

        /// This configuration with `particles` per subject and at most `signalCells` cells a
        /// room: what a server that keeps many subjects can afford of it.
        public func scaled(particles: Int, signalCells: Int) -> Configuration {
            var scaled = self
            scaled.particles = max(1, particles)
            scaled.signalCells = max(1, signalCells)
            return scaled
        }

        /// Phones locating themselves: signal model (one-sided, 10 dB below: the user's body
        /// only weakens a beacon) and particle mass, no point fix; doors pass 1 per second, a
        /// room is announced at belief 0.6. The fingerprints only tell a lost cloud where to look
        /// (issue 10, thirteenth round): they carry the user's body, and a cloud weighed by them
        /// every cycle followed it across walls. The belief was 0.9 until the nineteenth round;
        /// at 0.6, pooled over eight seeds, the p95 latency fell from 3.0 to 2.4 s on office.json
        /// and from 3.5 to 2.9 s on home.json, missed changes from 20 to 14 and 9 to 3, for 1.09 ×
        /// and 1.05 × the true changes announced (0.99 × and 0.99 × before).
        public static let phones = Configuration(weakerLossScale: 10, methods: [], filter: RoomFilter.Configuration(switchRate: 1, threshold: 0.6),
                                                 fingerprintsWeighParticles: false)
        /// The phones' default before the nineteenth round: a room announced at belief 0.9.
        public static let phonesBeliefNineTenths = Configuration(weakerLossScale: 10, methods: [], filter: RoomFilter.Configuration(switchRate: 1, threshold: 0.9),
                                                                 fingerprintsWeighParticles: false)
        /// The phones' default before the thirteenth round: the fingerprint fix weighs the
        /// particles every cycle. Kept for comparison.
        public static let phonesFingerprintWeighted = Configuration(weakerLossScale: 10, methods: [], filter: RoomFilter.Configuration(switchRate: 1, threshold: 0.9))
        /// The phones' default before the one-sided loss (symmetric 5 dB), kept for comparison.
        public static let phonesSymmetric = Configuration(methods: [], filter: RoomFilter.Configuration(switchRate: 1, threshold: 0.9))
        /// The phones' default with the user's body (``BodyShadow``) in the signal model and the
        /// particle filter, for comparison: it did not help on home.json (docs/evaluation.md).
        public static let phonesWithBody = Configuration(weakerLossScale: 10, body: BodyShadow(), methods: [],
                                                         filter: RoomFilter.Configuration(switchRate: 1, threshold: 0.9))
        /// Carried beacons located from gateways, fed every half second
        /// (``SightingLocator/tagRoomCycle``): signal model (temperature 1.5), particle mass and
        /// the particle filter's, fingerprints' and trilateration's fixes, each fix blurred by at
        /// least half its own uncertainty; doors pass 0.05 per second, belief 0.93. Chosen on
        /// eight seeds of each example map pooled, not on one run (docs/evaluation.md, ninth
        /// round): against ``tagsOneSecond`` on one-second cycles, p95 latency office 3.6 → 2.9 s
        /// and home 3.9 → 3.2 s, for 1.14 → 1.20 × and 1.39 → 1.34 × the true changes.
        public static let tags = Configuration(temperature: 1.5, uncertaintySpread: 0.5,
                                               filter: RoomFilter.Configuration(switchRate: 0.05, threshold: 0.93))
        /// The tags' default of the eighth round, for one-second cycles (fixed 0.5 m spread,
        /// doors 0.5 per second), kept for comparison.
        public static let tagsOneSecond = Configuration(temperature: 1.5)
        /// Carried beacons where a particle filter per subject costs too much (the server keeps
        /// up to 10,000 subjects a site, about 24 KB each with particles): the signal model
        /// (temperature 1.5) and robust trilateration's fix blurred by at least half its
        /// uncertainty, doors 0.05 per second, belief 0.93; at most 100 signal cells a room (rooms
        /// over 100 m² get coarser cells), so a subject's cycle stays cheap on large floors.
        /// Measured on one-second cycles pooled over eight seeds (docs/evaluation.md, tenth round).
        public static let tagsWithoutParticles = Configuration(particleMass: false, temperature: 1.5, methods: [.trilateration], uncertaintySpread: 0.5,
                                                               filter: RoomFilter.Configuration(switchRate: 0.05, threshold: 0.93), signalCells: 100)
        /// Phones where a particle filter per subject costs too much: the one-sided signal model
        /// and robust trilateration's fix blurred by at least half its uncertainty; doors pass
        /// 0.2 per second, belief 0.93, at most 100 signal cells a room (docs/evaluation.md, tenth round).
        public static let phonesWithoutParticles = Configuration(particleMass: false, weakerLossScale: 10, methods: [.trilateration], uncertaintySpread: 0.5,
                                                                 filter: RoomFilter.Configuration(switchRate: 0.2, threshold: 0.93), signalCells: 100)
        /// Particles a subject's filter has in ``serverTags(particles:)`` and ``serverPhones(particles:)``
        /// unless the server is told otherwise.
        public static let serverParticles = 300
        /// A server's carried beacons with a particle filter per subject: ``tags`` with
        /// `particles` particles and at most 100 signal cells a room (a server has no survey,
        /// so no fingerprints either).
        public static func serverTags(particles: Int = serverParticles) -> Configuration { tags.scaled(particles: particles, signalCells: 100) }
        /// A server's phones with a particle filter per subject: ``phones`` with `particles`
        /// particles and at most 100 signal cells a room.
        public static func serverPhones(particles: Int = serverParticles) -> Configuration { phones.scaled(particles: particles, signalCells: 100) }
        /// The tags' default before the eighth round (signal model at temperature 1), for comparison.
        public static let tagsTemperatureOne = Configuration()
    }

    public let configuration: Configuration
    public let map: SiteMap
    private var filter: RoomFilter
    private var locators: [LocateMethod: ScanLocator] = [:]
    private let signal: SignalRoomLikelihood?
    private let fixLikelihood: RoomLikelihood
    /// The table of the map's wall losses this decider's estimators share: a caller that
    /// rebuilds the decider with a new calibration passes it back instead of tabulating the
    /// walls again.
    public let wallLosses: WallLossGrid?

    /// `map`'s beacons are the anchors (for carried beacons located from gateways: the
    /// gateways, each at the tag's power plus its gain). The estimators model the map's walls;
    /// `wallLosses` is the ``wallLosses`` of an earlier decider on the same map.
    public init(map: SiteMap, model: PathLossModel, survey: [SurveyPoint] = [], configuration: Configuration, wallLosses: WallLossGrid? = nil) {
        self.configuration = configuration
        self.map = map
        filter = RoomFilter(rooms: map.rooms, doors: map.doors, configuration: configuration.filter)
        fixLikelihood = RoomLikelihood(rooms: map.rooms, spread: configuration.spread)
        let needed = configuration.methods + (configuration.particleMass && !configuration.methods.contains(.particle) ? [.particle] : [])
        for method in needed where method != .fingerprint || !survey.isEmpty {
            locators[method] = ScanLocator(method: method, map: map, model: model, survey: survey, attenuatingWalls: true, body: configuration.body,
                                           particles: configuration.particles, fingerprintsWeighParticles: configuration.fingerprintsWeighParticles,
                                           wallLosses: wallLosses ?? locators.values.first?.anchors.walls)
        }
        let anchors = locators.values.first?.anchors ?? AnchorSet(map: map, model: model, attenuatingWalls: true, wallLosses: wallLosses)
        self.wallLosses = anchors.walls
        signal = configuration.signal && !map.rooms.isEmpty ? SignalRoomLikelihood(rooms: map.rooms, anchors: anchors, weakerLossScale: configuration.weakerLossScale,
                                                                                               maximumCells: configuration.signalCells, modelsBody: configuration.body != nil) : nil
    }

    public func room(of subject: String) -> String? { filter.room(of: subject) }

    /// One cycle of `subject`'s readings (raw RSSI, the mean per anchor; `receiver`'s gain is
    /// taken off here, as ``ScanLocator`` does).
    public mutating func observe(subject: String, readings: [Reading], receiver: String, time: Double) -> [RoomEvent] {
        guard let (likelihoods, _) = evidence(subject: subject, readings: readings, receiver: receiver, time: time) else { return [] }
        return filter.observe(subject: subject, likelihoods: likelihoods, time: time)
    }

    /// The same for a subject whose track the caller keeps (``RoomFilter/Track``): a caller
    /// with many subjects sweeps only the silent ones (``advance(_:subject:to:)``), and can
    /// rebuild the decider with a new calibration without losing the beliefs.
    public mutating func observe(_ track: inout RoomFilter.Track?, subject: String, readings: [Reading], receiver: String, time: Double) -> [RoomEvent] {
        decide(&track, subject: subject, readings: readings, receiver: receiver, time: time).events
    }

    /// What one cycle decided, and the fixes the decider's locators made on the way: a caller
    /// that also shows positions can take one of them (walls modelled) instead of locating the
    /// readings a second time.
    public struct Decision: Sendable {
        public var events: [RoomEvent]
        public var fixes: [LocateMethod: Fix]
    }

    /// ``observe(_:subject:readings:receiver:time:)`` with the cycle's fixes.
    public mutating func decide(_ track: inout RoomFilter.Track?, subject: String, readings: [Reading], receiver: String, time: Double) -> Decision {
        guard let (likelihoods, fixes) = evidence(subject: subject, readings: readings, receiver: receiver, time: time) else {
            return Decision(events: [], fixes: [:])
        }
        return Decision(events: filter.observe(&track, subject: subject, likelihoods: likelihoods, time: time), fixes: fixes)
    }

    /// The same with the subject's particle filter also kept by the caller (nil before its
    /// first cycle), so that a caller that forgets a subject frees its particles too: the
    /// decider's own filters would stay until ``ScanLocator/maximumTrackedReceivers``.
    public mutating func decide(_ track: inout RoomFilter.Track?, particles: inout ParticleFilter?, subject: String, readings: [Reading],
                                receiver: String, time: Double) -> Decision {
        guard let (likelihoods, fixes) = evidence(subject: subject, readings: readings, receiver: receiver, time: time, keptParticles: &particles) else {
            return Decision(events: [], fixes: [:])
        }
        return Decision(events: filter.observe(&track, subject: subject, likelihoods: likelihoods, time: time), fixes: fixes)
    }

    /// Whether this decider runs a particle filter per subject (its mass or its fix is evidence).
    public var usesParticles: Bool { locators[.particle] != nil }

    /// A caller-kept track without a cycle for the filter's `absence` leaves its room.
    public func advance(_ track: inout RoomFilter.Track?, subject: String, to time: Double) -> [RoomEvent] {
        filter.advance(&track, subject: subject, to: time)
    }

    /// The room a caller-kept track names.
    public func room(of track: RoomFilter.Track?) -> String? { filter.room(of: track) }

    /// One cycle's evidence per room from this decider's own locators, and their fixes; nil
    /// without any evidence.
    private mutating func evidence(subject: String, readings: [Reading], receiver: String, time: Double) -> ([Double], [LocateMethod: Fix])? {
        var unused: ParticleFilter?
        return evidence(subject: subject, readings: readings, receiver: receiver, time: time, keptParticles: &unused, keptByCaller: false)
    }

    /// `keptByCaller`: the particle filter is `keptParticles`, not the particle locator's own.
    private mutating func evidence(subject: String, readings: [Reading], receiver: String, time: Double,
                                   keptParticles: inout ParticleFilter?, keptByCaller: Bool = true) -> ([Double], [LocateMethod: Fix])? {
        guard !map.rooms.isEmpty, !readings.isEmpty else { return nil }
        var fixes: [LocateMethod: Fix] = [:]
        for method in locators.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            if method == .particle && keptByCaller {
                fixes[method] = locators[method]?.locate(readings, receiver: subject, at: time, filter: &keptParticles)
                continue
            }
            guard var locator = locators[method] else { continue }
            locators[method] = nil
            fixes[method] = locator.locate(readings, receiver: subject, at: time)
            locators[method] = locator
        }
        let gain = locators.values.first?.anchors.model.gain(of: receiver) ?? 0
        let corrected = gain == 0 ? readings : readings.map { Reading(beacon: $0.beacon, rssi: $0.rssi - gain) }
        var mass: [Double]?
        if configuration.particleMass {
            mass = keptByCaller ? keptParticles?.mass(in: map.rooms.map(\.outline)) : locators[.particle]?.particleMass(of: subject, rooms: map.rooms)
        }
        return likelihoods(fixes: fixes, particleMass: mass, correctedReadings: corrected).map { ($0, fixes) }
    }

    /// The product of the cycle's evidence per room, nil when it has none. `particleMass` is
    /// ``ScanLocator/particleMass(of:rooms:)`` (one share per room, then the share outside).
    public func likelihoods(fixes: [LocateMethod: Fix], particleMass: [Double]?, correctedReadings: [Reading]) -> [Double]? {
        guard !map.rooms.isEmpty else { return nil }
        var combined = [Double](repeating: 1, count: map.rooms.count)
        var used = 0
        if let signal, let logs = signal.logLikelihoods(of: correctedReadings, body: configuration.body) {
            let values = SignalRoomLikelihood.likelihoods(logs: logs, temperature: configuration.temperature, outlierShare: signal.outlierShare)
            for room in combined.indices { combined[room] *= values[room] }
            used += 1
        }
        if configuration.particleMass, let particleMass, particleMass.count == map.rooms.count + 1 {
            let even = configuration.massOutlierShare / Double(map.rooms.count)
            for room in combined.indices { combined[room] *= (1 - configuration.massOutlierShare) * particleMass[room] + even }
            used += 1
        }
        for method in configuration.methods {
            guard let fix = fixes[method] else { continue }
            let values = fixLikelihood.likelihoods(of: fix.position, spread: Self.fixSpread(fix, spread: configuration.spread,
                                                                                              uncertaintyShare: configuration.uncertaintySpread))
            for room in combined.indices { combined[room] *= values[room] }
            used += 1
        }
        return used > 0 ? combined : nil
    }

    /// The spread (m) a fix's room likelihood is blurred by (``Configuration/uncertaintySpread``).
    public static func fixSpread(_ fix: Fix, spread: Double, uncertaintyShare: Double?) -> Double {
        guard let uncertaintyShare, fix.uncertainty.isFinite else { return spread }
        return max(spread, uncertaintyShare * fix.uncertainty)
    }

    /// Subjects without a cycle for the filter's `absence` leave their rooms.
    public mutating func advance(to time: Double) -> [RoomEvent] { filter.advance(to: time) }
}
