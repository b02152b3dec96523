import BeaconKit
import BeaconLocate
import Foundation

/// The locating pass of a `LocationEvaluation`: sightings in time order in, per-cycle fixes of
/// every method for every walker and carried beacon, room decisions, and the truth sampled
/// beside them.
struct LocationPass {
    typealias Direction = LocationReport.Direction

    private let scenario: Scenario
    private let map: SiteMap
    private let model: PathLossModel
    private let cycle: Double
    /// Seconds per room decision of a carried beacon (its fixes for the position table stay per `cycle`).
    private let tagRoomCycle: Double
    private let methods: [LocateMethod]
    private let phoneSurvey: [SurveyPoint]
    private let walkers: [SimulatedReceiver]
    private let tags: [SimulatedBeacon]
    private let tagByIdentity: [BeaconIdentity: Int]
    private let gatewayIndex: [String: Int]
    private let anchorIndex: [String: Int]
    private let walkerNames: Set<String>
    /// Survey of a tag at grid points as the gateways hear it; set before the first sighting.
    var tagSurvey: [SurveyPoint] = []
    /// Whether trilateration and the particle filter model the map's wall losses.
    var attenuatingWalls = true

    private var phoneLocators: [LocateMethod: ScanLocator] = [:]
    /// Per tag, per method: the tag is located against the gateways as anchors.
    private var tagLocators: [[LocateMethod: ScanLocator]] = []
    /// The same per `tagRoomCycle`, for the room filters: a room decider runs its own locators
    /// (``RoomDecider``), so its cadence need not be the printed fixes'.
    private var tagRoomLocators: [[LocateMethod: ScanLocator]] = []
    /// Room likelihoods from the signal model (no fix): one for phones, one per tag.
    private var phoneSignal: SignalRoomLikelihood?
    /// The phones' particle filter with the user's body modelled, when a variant asks for it.
    private var phoneBodyParticles: ScanLocator?
    /// The phones' particle filter with the fingerprints only for recovery, when a variant asks for it.
    private var phoneRecoveryOnlyParticles: ScanLocator?
    private var tagSignals: [SignalRoomLikelihood?] = []
    /// Whole room deciders (``RoomDecider``, without a survey, as a server would run them), one
    /// per row of ``RoomDeciderRow/evaluated(_:)``: for phones one each, for tags one per tag and row.
    private let deciderRows: [Direction: [RoomDeciderRow]]
    private var phoneDeciders: [RoomDecider] = []
    private var tagDeciders: [[RoomDecider]] = []
    private var phonePending: [String: [Int: (sum: Double, count: Int)]] = [:]
    private var tagPending: [Int: [Int: (sum: Double, count: Int)]] = [:]
    private var tagRoomPending: [Int: [Int: (sum: Double, count: Int)]] = [:]
    private var cycleEnd: Double
    private var tagRoomCycleEnd: Double
    private var nextTruthSample = 0.0
    private let truthStep = 0.1

    private var errors: [Direction: [LocateMethod: [Double]]] = [:]
    /// fixRooms[direction][method][hysteresis]: the evaluation's configuration, and none.
    private var fixRooms: [Direction: [LocateMethod: [FixRoomPresence]]] = [:]
    static let hysteresisLabels = ["", ", no hysteresis"]
    /// The room filters (`RoomFilter`), per direction, each fed the likelihoods of its methods' fixes.
    private var roomFilters: [Direction: [RoomFilter]] = [:]
    let roomFilterVariants: [Direction: [RoomFilterVariant]]
    private let roomLikelihoods: [Double: RoomLikelihood]
    private var gatewayRooms: RoomPresence
    private var beaconRooms: RoomPresence
    /// The room rules of ESPresense, Bermuda and room-assistant, on the tags' packets.
    private var peerRooms: PeerRoomDeciders
    /// decided[direction][decider][subject]
    private var decided: [Direction: [String: [String: RoomTimeline]]] = [:]
    private var truth: [Direction: [String: RoomTimeline]] = [:]
    /// The server's site trackers, fed every sighting (``SiteTrackerRoomDecider``).
    var siteTrackers: [SiteTrackerRoomDecider] = []

    init(scenario: Scenario, map: SiteMap, model: PathLossModel, cycle: Double, tagRoomCycle: Double, phoneSurvey: [SurveyPoint],
         walkers: [String], tags: [SimulatedBeacon], gateways: [String],
         fixRooms fixConfiguration: FixRoomPresence.Configuration, roomPresence: RoomPresence.Configuration) {
        self.scenario = scenario
        self.map = map
        self.model = model
        self.cycle = cycle
        self.tagRoomCycle = tagRoomCycle
        self.phoneSurvey = phoneSurvey
        let walkerSet = Set(walkers)
        self.walkers = scenario.receivers.filter { walkerSet.contains($0.name) }
        walkerNames = walkerSet
        self.tags = tags
        tagByIdentity = Dictionary(tags.enumerated().map { ($1.identity, $0) }, uniquingKeysWith: { first, _ in first })
        gatewayIndex = Dictionary(uniqueKeysWithValues: gateways.enumerated().map { ($1, $0) })
        anchorIndex = Dictionary(map.beacons.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        methods = LocateMethod.allCases.filter { $0 != .fingerprint || !phoneSurvey.isEmpty }
        cycleEnd = cycle
        tagRoomCycleEnd = tagRoomCycle
        let variants = Dictionary(uniqueKeysWithValues: Direction.allCases.map { ($0, RoomFilterVariant.evaluated($0)) })
        deciderRows = Dictionary(uniqueKeysWithValues: Direction.allCases.map { ($0, RoomDeciderRow.evaluated($0)) })
        roomFilterVariants = variants
        roomLikelihoods = Dictionary(variants.values.joined().map { ($0.spread, RoomLikelihood(rooms: map.rooms, spread: $0.spread)) },
                                     uniquingKeysWith: { first, _ in first })
        for direction in Direction.allCases {
            roomFilters[direction] = variants[direction]!.map { RoomFilter(rooms: map.rooms, doors: map.doors, configuration: $0.configuration) }
        }
        gatewayRooms = RoomPresence(map: map, receiverGain: model.receiverGain, configuration: roomPresence)
        peerRooms = PeerRoomDeciders(receiverRooms: Dictionary(gateways.compactMap { name in map.room(ofReceiver: name).map { (name, $0) } },
                                                               uniquingKeysWith: { first, _ in first }))
        // A phone's "room receivers" are the room's beacons: the room whose beacon is heard
        // loudest, corrected by each beacon's calibrated power.
        var beaconRoom: [String: String] = [:], beaconOffset: [String: Double] = [:]
        for beacon in map.beacons {
            beaconRoom[beacon.id] = map.room(at: beacon.position)?.name
            beaconOffset[beacon.id] = model.power(of: beacon) - model.defaultPower
        }
        beaconRooms = RoomPresence(receiverRooms: beaconRoom, receiverGain: beaconOffset, configuration: roomPresence)
        for direction in Direction.allCases {
            fixRooms[direction] = Dictionary(uniqueKeysWithValues: LocateMethod.allCases.map { method in
                (method, [FixRoomPresence(rooms: map.rooms, configuration: fixConfiguration),
                          FixRoomPresence(rooms: map.rooms, configuration: .init(margin: 0, dwell: 0, absence: fixConfiguration.absence))])
            })
        }
    }

    mutating func receive(_ item: SimulatedSighting) {
        if phoneLocators.isEmpty { buildLocators() }
        let time = item.sighting.time
        sampleTruth(until: time)
        closeCycles(endingBy: time)
        for index in siteTrackers.indices { apply(siteTrackers[index].receive(item.sighting), from: siteTrackers[index]) }
        guard let rssi = item.sighting.rssi.map(Double.init), let identity = item.sighting.frame.iBeacon?.identity else { return }
        let receiver = item.sighting.receiver
        if walkerNames.contains(receiver), let anchor = map.beaconIndex(for: item.sighting.frame) {
            let previous = phonePending[receiver, default: [:]][anchor] ?? (0, 0)
            phonePending[receiver, default: [:]][anchor] = (previous.sum + rssi, previous.count + 1)
            apply(beaconRooms.observe(subject: receiver, receiver: map.beacons[anchor].id, rssi: rssi, at: time),
                  direction: .phones, decider: "room beacons")
        } else if let gateway = gatewayIndex[receiver], let tag = tagByIdentity[identity] {
            let previous = tagPending[tag, default: [:]][gateway] ?? (0, 0)
            tagPending[tag, default: [:]][gateway] = (previous.sum + rssi, previous.count + 1)
            let previousForRooms = tagRoomPending[tag, default: [:]][gateway] ?? (0, 0)
            tagRoomPending[tag, default: [:]][gateway] = (previousForRooms.sum + rssi, previousForRooms.count + 1)
            apply(gatewayRooms.observe(subject: tags[tag].name, receiver: receiver, rssi: rssi, at: time),
                  direction: .tags, decider: "room gateways")
            for (label, events) in peerRooms.observe(subject: tags[tag].name, receiver: receiver, rssi: rssi,
                                                     measuredPower: Double(tags[tag].measuredPower.dBm), at: time) {
                apply(events, direction: .tags, decider: label)
            }
        }
    }

    mutating func finish() {
        if phoneLocators.isEmpty { buildLocators() }
        sampleTruth(until: scenario.duration)
        while min(cycleEnd, tagRoomCycleEnd) <= scenario.duration { closeNextCycle() }
        for index in siteTrackers.indices { apply(siteTrackers[index].advance(to: scenario.duration), from: siteTrackers[index]) }
    }

    /// Closes the fix cycles and the tags' room cycles that end by `time`, in time order (a
    /// room cycle first when both end together, as when they are the same).
    private mutating func closeCycles(endingBy time: Double) {
        while time >= min(cycleEnd, tagRoomCycleEnd) { closeNextCycle() }
    }

    private mutating func closeNextCycle() {
        if tagRoomCycleEnd <= cycleEnd { closeTagRoomCycle() } else { closeCycle() }
    }

    private mutating func buildLocators() {
        for method in methods {
            phoneLocators[method] = ScanLocator(method: method, map: map, model: model, survey: phoneSurvey, attenuatingWalls: attenuatingWalls)
        }
        if let body = roomFilterVariants[.phones, default: []].lazy.compactMap(\.body).first {
            phoneBodyParticles = ScanLocator(method: .particle, map: map, model: model, survey: phoneSurvey, attenuatingWalls: attenuatingWalls, body: body)
        }
        if roomFilterVariants[.phones, default: []].contains(where: { !$0.fingerprintsWeighParticles }) {
            phoneRecoveryOnlyParticles = ScanLocator(method: .particle, map: map, model: model, survey: phoneSurvey, attenuatingWalls: attenuatingWalls,
                                                     fingerprintsWeighParticles: false)
        }
        tagLocators = makeTagLocators(LocateMethod.allCases)
        if !map.rooms.isEmpty {
            phoneDeciders = deciderRows[.phones, default: []].map { RoomDecider(map: map, model: model, configuration: $0.configuration) }
            tagDeciders = tags.map { tag in
                let (reverse, reverseModel) = tagAnchorMap(for: tag)
                return deciderRows[.tags, default: []].map { RoomDecider(map: reverse, model: reverseModel, configuration: $0.configuration) }
            }
        }
        // The room filters' fixes, and the particle filter: its mass, and the signal model's anchors.
        let roomMethods = Set(roomFilterVariants[.tags, default: []].flatMap(\.methods) + [.particle])
        tagRoomLocators = makeTagLocators(LocateMethod.allCases.filter(roomMethods.contains))
        guard !map.rooms.isEmpty, roomFilterVariants.values.joined().contains(where: { $0.evidence.contains(.signal) }) else { return }
        let phonesModelBody = roomFilterVariants[.phones, default: []].contains { $0.body != nil }
        phoneSignal = phoneLocators[.particle].map { SignalRoomLikelihood(rooms: map.rooms, anchors: $0.anchors, modelsBody: phonesModelBody) }
        tagSignals = tagRoomLocators.map { locators in locators[.particle].map { SignalRoomLikelihood(rooms: map.rooms, anchors: $0.anchors) } }
    }

    /// The map with the gateways as the anchors of `tag`: each is heard at the tag's advertised
    /// power plus the gateway's calibrated gain.
    private func tagAnchorMap(for tag: SimulatedBeacon) -> (SiteMap, PathLossModel) {
        let gateways = gatewayIndex.sorted { $0.value < $1.value }.map(\.key)
        let anchors = gateways.map { name -> MappedBeacon in
            let position = map.receivers.first { $0.name == name }?.position ?? Position(x: 0, y: 0)
            return MappedBeacon(id: name, position: position, measuredPower: Double(tag.measuredPower.dBm) + model.gain(of: name))
        }
        let reverse = SiteMap(name: map.name, width: map.width, height: map.height, walls: map.walls, rooms: map.rooms,
                              doors: map.doors, beacons: anchors)
        return (reverse, PathLossModel(exponent: model.exponent, defaultPower: model.defaultPower, heightOffset: model.heightOffset))
    }

    private func makeTagLocators(_ methods: [LocateMethod]) -> [[LocateMethod: ScanLocator]] {
        tags.map { tag in
            let (reverse, reverseModel) = tagAnchorMap(for: tag)
            var locators: [LocateMethod: ScanLocator] = [:]
            for method in methods where method != .fingerprint || !tagSurvey.isEmpty {
                locators[method] = ScanLocator(method: method, map: reverse, model: reverseModel, survey: tagSurvey, attenuatingWalls: attenuatingWalls)
            }
            return locators
        }
    }

    private mutating func sampleTruth(until time: Double) {
        while nextTruthSample <= time && nextTruthSample <= scenario.duration {
            let t = nextTruthSample
            for walker in walkers { truth[.phones, default: [:]][walker.name, default: RoomTimeline()].set(scenario.trueRoom(of: walker, at: t), at: t) }
            for tag in tags { truth[.tags, default: [:]][tag.name, default: RoomTimeline()].set(scenario.trueRoom(of: tag, at: t), at: t) }
            nextTruthSample += truthStep
        }
    }

    private mutating func closeCycle() {
        let end = cycleEnd
        let middle = end - cycle / 2
        for walker in walkers {
            guard let pending = phonePending[walker.name] else { continue }
            let readings = pending.keys.sorted().map { Reading(beacon: $0, rssi: pending[$0]!.sum / Double(pending[$0]!.count)) }
            let position = scenario.state(of: walker, at: middle).position
            var fixes: [LocateMethod: Fix] = [:]
            for method in methods {
                guard let fix = phoneLocators[method]?.locate(readings, receiver: walker.name, at: end) else { continue }
                record(fix, subject: walker.name, truth: position, direction: .phones, method: method, at: end)
                fixes[method] = fix
            }
            let gain = model.gain(of: walker.name)
            _ = phoneBodyParticles?.locate(readings, receiver: walker.name, at: end)
            _ = phoneRecoveryOnlyParticles?.locate(readings, receiver: walker.name, at: end)
            filterRooms(fixes, evidence: RoomCycleEvidence(
                            signal: phoneSignal, readings: readings.map { Reading(beacon: $0.beacon, rssi: $0.rssi - gain) },
                            particles: phoneLocators[.particle], bodyParticles: phoneBodyParticles, recoveryOnlyParticles: phoneRecoveryOnlyParticles,
                            subject: walker.name, rooms: map.rooms),
                        subject: walker.name, direction: .phones, at: end)
            for (row, label) in deciderRows[.phones, default: []].map(\.label).enumerated() where phoneDeciders.indices.contains(row) {
                apply(phoneDeciders[row].observe(subject: walker.name, readings: readings, receiver: walker.name, time: end), direction: .phones, decider: label)
            }
        }
        for (index, tag) in tags.enumerated() {
            guard let pending = tagPending[index] else { continue }
            let readings = pending.keys.sorted().map { Reading(beacon: $0, rssi: pending[$0]!.sum / Double(pending[$0]!.count)) }
            let position = scenario.position(of: tag, at: middle)
            for method in LocateMethod.allCases {
                guard let fix = tagLocators[index][method]?.locate(readings, receiver: tag.name, at: end) else { continue }
                record(fix, subject: tag.name, truth: position, direction: .tags, method: method, at: end)
            }
        }
        phonePending = [:]
        tagPending = [:]
        apply(gatewayRooms.advance(to: end), direction: .tags, decider: "room gateways")
        apply(beaconRooms.advance(to: end), direction: .phones, decider: "room beacons")
        for (label, events) in peerRooms.advance(to: end) { apply(events, direction: .tags, decider: label) }
        advanceRoomFilters(.phones, to: end)
        for direction in Direction.allCases {
            for method in LocateMethod.allCases {
                for (variant, label) in Self.hysteresisLabels.enumerated() {
                    guard var rooms = fixRooms[direction]?[method]?[variant] else { continue }
                    let events = rooms.advance(to: end)
                    fixRooms[direction]![method]![variant] = rooms
                    apply(events, direction: direction, decider: "fixes (\(method.rawValue))\(label)")
                }
            }
        }
        cycleEnd += cycle
    }

    /// One room cycle of every carried beacon: the room filters' evidence from the tag room
    /// locators, then the tags' filters advanced (exits after silence).
    private mutating func closeTagRoomCycle() {
        let end = tagRoomCycleEnd
        for (index, tag) in tags.enumerated() {
            guard let pending = tagRoomPending[index] else { continue }
            let readings = pending.keys.sorted().map { Reading(beacon: $0, rssi: pending[$0]!.sum / Double(pending[$0]!.count)) }
            var fixes: [LocateMethod: Fix] = [:]
            for method in LocateMethod.allCases {
                fixes[method] = tagRoomLocators[index][method]?.locate(readings, receiver: tag.name, at: end)
            }
            filterRooms(fixes, evidence: RoomCycleEvidence(
                            signal: tagSignals.indices.contains(index) ? tagSignals[index] : nil, readings: readings,
                            particles: tagRoomLocators[index][.particle], subject: tag.name, rooms: map.rooms),
                        subject: tag.name, direction: .tags, at: end)
            for (row, label) in deciderRows[.tags, default: []].map(\.label).enumerated() where tagDeciders.indices.contains(index) {
                apply(tagDeciders[index][row].observe(subject: tag.name, readings: readings, receiver: tag.name, time: end), direction: .tags, decider: label)
            }
        }
        tagRoomPending = [:]
        advanceRoomFilters(.tags, to: end)
        tagRoomCycleEnd += tagRoomCycle
    }

    private mutating func advanceRoomFilters(_ direction: Direction, to end: Double) {
        for (index, variant) in roomFilterVariants[direction, default: []].enumerated() {
            guard var filter = roomFilters[direction]?[index] else { continue }
            let events = filter.advance(to: end)
            roomFilters[direction]![index] = filter
            apply(events, direction: direction, decider: variant.label)
        }
        for (row, label) in deciderRows[direction, default: []].map(\.label).enumerated() {
            switch direction {
            case .phones:
                guard phoneDeciders.indices.contains(row) else { continue }
                apply(phoneDeciders[row].advance(to: end), direction: direction, decider: label)
            case .tags:
                for index in tagDeciders.indices where tagDeciders[index].indices.contains(row) {
                    apply(tagDeciders[index][row].advance(to: end), direction: direction, decider: label)
                }
            }
        }
    }

    private mutating func record(_ fix: Fix, subject: String, truth position: Position3D, direction: Direction, method: LocateMethod, at time: Double) {
        errors[direction, default: [:]][method, default: []].append(fix.position.distance(to: position.plan))
        guard !map.rooms.isEmpty else { return }
        for (variant, label) in Self.hysteresisLabels.enumerated() {
            guard var rooms = fixRooms[direction]?[method]?[variant] else { continue }
            let events = rooms.observe(subject: subject, at: fix.position, time: time)
            fixRooms[direction]![method]![variant] = rooms
            apply(events, direction: direction, decider: "fixes (\(method.rawValue))\(label)")
        }
    }

    /// Feeds one cycle of a subject to every room filter: the product of the likelihoods of
    /// the filter's evidence that this cycle has.
    private mutating func filterRooms(_ fixes: [LocateMethod: Fix], evidence: RoomCycleEvidence, subject: String, direction: Direction, at time: Double) {
        guard !map.rooms.isEmpty, !fixes.isEmpty else { return }
        var cache: [String: [Double]] = [:]
        var evidence = evidence
        for (index, variant) in roomFilterVariants[direction, default: []].enumerated() {
            var combined = [Double](repeating: 1, count: map.rooms.count)
            var used = 0
            for source in variant.evidence {
                let values: [Double]?
                switch source {
                case .fix(let method):
                    guard let fix = fixes[method], let likelihood = roomLikelihoods[variant.spread] else { continue }
                    let spread = RoomDecider.fixSpread(fix, spread: variant.spread, uncertaintyShare: variant.uncertaintySpread)
                    let key = "\(method.rawValue) \(spread)"
                    values = cache[key] ?? likelihood.likelihoods(of: fix.position, spread: spread)
                    cache[key] = values
                case .particleMass:
                    values = evidence.massLikelihoods(outlierShare: variant.massOutlierShare, body: variant.body != nil,
                                                      fingerprintsWeigh: variant.fingerprintsWeighParticles)
                case .signal:
                    values = evidence.signalLikelihoods(temperature: variant.temperature, weakerLossScale: variant.weakerLossScale, body: variant.body)
                }
                guard let values else { continue }
                for room in combined.indices { combined[room] *= values[room] }
                used += 1
            }
            guard used > 0, var filter = roomFilters[direction]?[index] else { continue }
            let events = filter.observe(subject: subject, likelihoods: combined, time: time)
            roomFilters[direction]![index] = filter
            apply(events, direction: direction, decider: variant.label)
        }
    }

    private mutating func apply(_ events: [RoomEvent], direction: Direction, decider: String) {
        for event in events {
            decided[direction, default: [:]][decider, default: [:]][event.subject, default: RoomTimeline()]
                .set(event.kind == .enter ? event.room : nil, at: event.time)
        }
    }

    /// A site tracker's changes, in the rows it names; a subject the scenario does not
    /// have in that direction is not scored.
    private mutating func apply(_ changes: [SiteTrackerRoomChange], from decider: SiteTrackerRoomDecider) {
        for change in changes {
            let known = change.direction == .phones ? walkerNames.contains(change.subject) : tags.contains { $0.name == change.subject }
            guard known, let label = decider.labels[change.direction] else { continue }
            decided[change.direction, default: [:]][label, default: [:]][change.subject, default: RoomTimeline()].set(change.room, at: change.time)
        }
    }

    /// The position errors and every room decider's score, in report order.
    func tally() -> LocationTally {
        var tally = LocationTally(errors: errors)
        guard !map.rooms.isEmpty else { return tally }
        for direction in Direction.allCases {
            let subjects = truth[direction] ?? [:]
            guard !subjects.isEmpty else { continue }
            let deciders = roomFilterVariants[direction, default: []].map(\.label) + deciderRows[direction, default: []].map(\.label)
                + siteTrackers.compactMap { $0.labels[direction] }
                + (direction == .phones ? ["room beacons"] : ["room gateways"] + PeerRoomDeciders.labels)
                + Self.hysteresisLabels.flatMap { label in LocateMethod.allCases.map { "fixes (\($0.rawValue))\(label)" } }
            for decider in deciders {
                guard let timelines = decided[direction]?[decider] else { continue }
                var score = RoomScore()
                for (subject, truthTimeline) in subjects.sorted(by: { $0.key < $1.key }) {
                    score.add(truth: truthTimeline, decided: timelines[subject] ?? RoomTimeline(), duration: scenario.duration)
                }
                tally.rooms.append(LocationTally.RoomEntry(direction: direction, decider: decider, score: score))
            }
        }
        return tally
    }
}

/// One cycle's fix-free room evidence for one subject, computed once on first use and shared by
/// every room filter variant.
struct RoomCycleEvidence {
    let signal: SignalRoomLikelihood?
    let readings: [Reading]
    let particles: ScanLocator?
    /// The same filter with the user's body modelled (phones), when a variant asks for it.
    var bodyParticles: ScanLocator? = nil
    /// The same filter with the fingerprints only for recovery (phones), when a variant asks for it.
    var recoveryOnlyParticles: ScanLocator? = nil
    let subject: String
    let rooms: [Room]
    /// Per signal model (weaker-reading scale, nil: symmetric; body or none), the cycle's log-likelihoods.
    private struct SignalKey: Hashable {
        var weakerLossScale: Double?
        var body: BodyShadow?
    }
    private var signalLogs: [SignalKey: [Double]?] = [:]
    private var mass: [Double]??
    private var bodyMass: [Double]??
    private var recoveryOnlyMass: [Double]??

    init(signal: SignalRoomLikelihood?, readings: [Reading], particles: ScanLocator?, bodyParticles: ScanLocator? = nil,
         recoveryOnlyParticles: ScanLocator? = nil, subject: String, rooms: [Room]) {
        self.signal = signal
        self.readings = readings
        self.particles = particles
        self.bodyParticles = bodyParticles
        self.recoveryOnlyParticles = recoveryOnlyParticles
        self.subject = subject
        self.rooms = rooms
    }

    mutating func signalLikelihoods(temperature: Double, weakerLossScale: Double? = nil, body: BodyShadow? = nil) -> [Double]? {
        let key = SignalKey(weakerLossScale: weakerLossScale, body: body)
        if signalLogs[key] == nil { signalLogs[key] = .some(signal?.logLikelihoods(of: readings, weakerLossScale: weakerLossScale, body: body)) }
        guard let logs = signalLogs[key]!, let signal else { return nil }
        return SignalRoomLikelihood.likelihoods(logs: logs, temperature: temperature, outlierShare: signal.outlierShare)
    }

    mutating func massLikelihoods(outlierShare: Double, body: Bool = false, fingerprintsWeigh: Bool = true) -> [Double]? {
        let masses: [Double]?
        if !fingerprintsWeigh, recoveryOnlyParticles != nil {
            if recoveryOnlyMass == nil { recoveryOnlyMass = .some(recoveryOnlyParticles?.particleMass(of: subject, rooms: rooms)) }
            masses = recoveryOnlyMass!
        } else if body {
            if bodyMass == nil { bodyMass = .some(bodyParticles?.particleMass(of: subject, rooms: rooms)) }
            masses = bodyMass!
        } else {
            if mass == nil { mass = .some(particles?.particleMass(of: subject, rooms: rooms)) }
            masses = mass!
        }
        guard let masses, masses.count == rooms.count + 1 else { return nil }
        let even = 1 / Double(max(1, rooms.count))
        return masses.prefix(rooms.count).map { (1 - outlierShare) * $0 + outlierShare * even }
    }
}
