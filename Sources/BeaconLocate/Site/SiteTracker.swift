import BeaconKit
import DequeModule
import Foundation

/// One site's positions, rooms and calibration, as a value driven only by the sightings' own
/// times: the per-batch work that spans all of a site's gateways (the gateway's monitor is per
/// gateway). The server's `PositionTracking` owns one per site and feeds it each accepted batch.
///
/// A gateway is tied to the map by name: the gateway registered as `pi-west` is the map's
/// receiver `pi-west`.
/// - A map receiver with a position is a fixed gateway: what it hears of the map's fixed beacons
///   calibrates the site (exponent, beacon powers, receiver gains), and the other iBeacons it
///   hears are carried beacons, located from the positions of the gateways that hear them
///   (the gateways are the anchors).
/// - A map receiver with only a room places carried beacons in rooms but not on the plan.
/// - A gateway of the site that is not among the map's receivers is a phone: it is located from
///   the fixed beacons it hears (the beacons are the anchors), and put in rooms by them.
///
/// Per cycle (one second of the gateways' clock) each subject's readings are averaged per anchor
/// and located by robust trilateration (with the map's walls where the room decider runs: its
/// own fix is the position). Rooms are decided by BeaconLocate's ``RoomDecider``
/// (``Configuration/beaconRooms``, ``Configuration/phoneRooms``), by default without particles
/// (the signal model and trilateration, a belief per subject that the tracker keeps); with a
/// particle configuration (``RoomDecider/Configuration/serverPhones(particles:)``) each subject
/// also keeps its own particle filter, whose fix is then the position. Carried beacons on a
/// map with receivers that have only a room (one scanner per room) keep ``RoomPresence``, which
/// takes each receiver's mean of the cycle. Work per batch is proportional to the batch and
/// to the subjects that fell silent lately, never to everything heard before; at most
/// ``Configuration/maximumSubjects`` subjects are kept, the stalest evicted first.
public struct SiteTracker: Sendable {
    public struct Configuration: Sendable, Hashable {
        public var cycle: Double
        public var maximumSubjects: Int
        /// Seconds of gateway time between refits of the calibration.
        public var calibrationInterval: Double
        /// Room presence where receivers have only a room, and the silence after which a
        /// subject's hearings are swept.
        public var presence: RoomPresence.Configuration
        /// Rooms of carried beacons when every receiver of the map has a position.
        public var beaconRooms: RoomDecider.Configuration
        /// Rooms of phones (located from the map's fixed beacons).
        public var phoneRooms: RoomDecider.Configuration
        /// How firmly the fit of the fixed links holds its priors.
        public var calibrationPriors: SiteCalibrator.Priors
        /// How firmly the phones' fit (the fixed links and the map's survey) holds its priors.
        public var surveyCalibrationPriors: SiteCalibrator.Priors

        public static let defaultMaximumSubjects = 10_000

        public init(cycle: Double = 1, maximumSubjects: Int = Self.defaultMaximumSubjects, calibrationInterval: Double = 30,
                    presence: RoomPresence.Configuration = RoomPresence.Configuration(),
                    beaconRooms: RoomDecider.Configuration = .tagsWithoutParticles, phoneRooms: RoomDecider.Configuration = .phonesWithoutParticles,
                    calibrationPriors: SiteCalibrator.Priors = .fixedLinks, surveyCalibrationPriors: SiteCalibrator.Priors = .weak) {
            self.cycle = max(0.1, cycle)
            self.maximumSubjects = max(1, maximumSubjects)
            self.calibrationInterval = max(1, calibrationInterval)
            self.presence = presence
            self.beaconRooms = beaconRooms
            self.phoneRooms = phoneRooms
            self.calibrationPriors = calibrationPriors
            self.surveyCalibrationPriors = surveyCalibrationPriors
        }
    }

    /// Carried beacons are located with every anchor at this reference power; each reading is
    /// shifted by the difference between the beacon's advertised power and it.
    static let referencePower = -59.0

    /// How a subject's rooms are decided, with that rule's state for the subject.
    enum Rooms: Sendable {
        /// The strongest room receiver (maps with receivers that have only a room).
        case presence(RoomPresence)
        /// The site's room decider; the belief is the subject's own (nil before its first cycle).
        case decider(RoomFilter.Track?)
    }

    struct Subject: Sendable {
        var rooms: Rooms
        /// The subject's particle filter where its room decider runs one (nil before its first
        /// cycle); it goes with the subject when the subject is evicted.
        var particles: ParticleFilter?
        var lastHeard: Double
        var lastCycle: Int
        var power: Double
        var fix: Fix?
        var fixTime: Double?
        var anchors = 0
    }

    public let map: SiteMap
    public let configuration: Configuration
    /// The fit of the fixed gateways hearing the fixed beacons: what carried beacons are
    /// located with (the gateways' gains and the exponent).
    public private(set) var calibration: SiteCalibration?
    /// Gateway time of the latest refit, nil before the first.
    public private(set) var calibratedAt: Double?
    public private(set) var model: PathLossModel
    private var calibrator: SiteCalibrator
    /// With a map survey, the fit of the fixed links and the survey's scans together, weakly
    /// held (the survey's links at many distances decide): what phones are located with. A
    /// phone hears the beacons as the surveyor's phone did, from hand height, while the fixed
    /// links run between mounted beacons and gateways. On home.json the survey's fit took the
    /// server's phones with particles from 88.4 % to 91.0 % of seconds in the right room over
    /// eight seeds, and the same fit for carried beacons took office.json's tags from 96.0 % to
    /// 82.6 % (docs/evaluation.md, sixteenth round). Nil without a survey: phones use ``model``.
    public private(set) var surveyCalibration: SiteCalibration?
    private var surveyCalibrator: SiteCalibrator?
    /// What phones are located with: ``model``, or with a map survey ``surveyCalibration``'s.
    public private(set) var phoneModel: PathLossModel
    private let baseModel: PathLossModel
    private var beaconLocator: RobustTrilateration
    private var receiverLocator: RobustTrilateration
    /// Receiver name → index among the positioned receivers (the carried beacons' anchors).
    private let positionedReceivers: [String: Int]
    private let receiverNames: Set<String>
    private let fixedBeacons: [BeaconIdentity: Int]
    private let beaconRoomPresence: RoomPresence
    private let phoneRoomPresence: RoomPresence
    /// Nil where ``RoomPresence`` decides (no rooms; receivers with only a room).
    private var beaconRooms: RoomDecider?
    private var phoneRooms: RoomDecider?
    private(set) var subjects: [TrackedSubject: Subject] = [:]
    private var pending: [TrackedSubject: [Int: (sum: Double, count: Int)]] = [:]
    /// Subject → presence receiver (gateway, or fixed beacon for a phone) → corrected RSSI sums.
    private var pendingPresence: [TrackedSubject: [String: (sum: Double, count: Int)]] = [:]
    /// (beacon index, receiver index) → RSSI sum and count in the open cycle.
    private var pendingLinks: [Int: [Int: (sum: Double, count: Int)]] = [:]
    private var heard: Deque<(subject: TrackedSubject, cycle: Int)> = []
    private var fading: Set<TrackedSubject> = []
    private var openCycle: Int?
    /// The site's clock: the latest usable sighting time fed.
    public private(set) var latestTime: Double?
    private var lastFitCycle: Int?
    public private(set) var evictedSubjects = 0
    /// Fixes made since the tracker started (for benchmarks and operators).
    public private(set) var fixCount = 0

    public init(map: SiteMap, configuration: Configuration = Configuration()) {
        self.map = map
        self.configuration = configuration
        let baseModel = PathLossModel()
        self.baseModel = baseModel
        self.model = baseModel
        self.phoneModel = baseModel
        var powers: [String: Double] = [:]
        for beacon in map.beacons { powers[beacon.id] = beacon.measuredPower }
        calibrator = SiteCalibrator(priorPower: powers, defaultPower: baseModel.defaultPower, priors: configuration.calibrationPriors)
        if !map.survey.isEmpty {
            var surveyed = SiteCalibrator(priorPower: powers, defaultPower: baseModel.defaultPower, priors: configuration.surveyCalibrationPriors)
            for point in map.survey { surveyed.add(survey: point, map: map, heightOffset: baseModel.heightOffset, receiver: Self.surveyReceiver) }
            surveyCalibrator = surveyed
        }
        var positioned: [String: Int] = [:]
        var anchorMap = SiteMap(name: map.name, width: map.width, height: map.height)
        for receiver in map.receivers {
            guard let position = receiver.position else { continue }
            positioned[receiver.name] = anchorMap.beacons.count
            anchorMap.beacons.append(MappedBeacon(id: receiver.name, position: position, measuredPower: Self.referencePower))
        }
        positionedReceivers = positioned
        receiverNames = Set(map.receivers.map(\.name))
        var fixed: [BeaconIdentity: Int] = [:]
        for (index, beacon) in map.beacons.enumerated() {
            if let identity = beacon.identity, fixed[identity] == nil { fixed[identity] = index }
        }
        fixedBeacons = fixed
        beaconRoomPresence = RoomPresence(map: map, configuration: configuration.presence)
        var beaconRooms: [String: String] = [:]
        for beacon in map.beacons { beaconRooms[beacon.id] = map.room(at: beacon.position)?.name }
        phoneRoomPresence = RoomPresence(receiverRooms: beaconRooms, configuration: configuration.presence)
        self.anchorMap = anchorMap
        beaconLocator = RobustTrilateration(anchors: AnchorSet(map: map, model: baseModel))
        receiverLocator = RobustTrilateration(anchors: AnchorSet(map: anchorMap, model: PathLossModel(exponent: baseModel.exponent)))
        let everyReceiverPlaced = map.receivers.allSatisfy { $0.position != nil }
        roomAnchorMap = !map.rooms.isEmpty && positioned.count >= 2 && everyReceiverPlaced
            ? SiteMap(name: map.name, width: map.width, height: map.height, walls: map.walls, rooms: map.rooms, doors: map.doors, beacons: anchorMap.beacons)
            : nil
        makeRoomDeciders()
        if surveyCalibrator != nil { refit(at: nil) }
    }

    private let anchorMap: SiteMap
    /// The gateways as anchors on the map's floor (walls, rooms, doors), when the room decider
    /// decides carried beacons' rooms.
    private let roomAnchorMap: SiteMap?

    /// Builds the room deciders with the current calibration; the beliefs live in the subjects.
    private mutating func makeRoomDeciders() {
        beaconRooms = roomAnchorMap.map { anchors in
            // Readings reach it corrected for each gateway's gain and the beacon's power.
            let anchorModel = PathLossModel(exponent: model.exponent, defaultPower: model.defaultPower, heightOffset: model.heightOffset)
            // The survey read as a carried beacon's readings are: each gateway's fitted gain off
            // and shifted to the reference power, so the fingerprints follow each refit.
            let fingerprints = map.tagFingerprints(anchors: positionedReceivers, referencePower: Self.referencePower) { model.gain(of: $0) }
            var rooms = configuration.beaconRooms
            if !fingerprints.isEmpty && !rooms.methods.contains(.fingerprint) { rooms.methods.append(.fingerprint) }
            return RoomDecider(map: anchors, model: anchorModel, survey: fingerprints, configuration: rooms, wallLosses: beaconRooms?.wallLosses)
        }
        phoneRooms = map.rooms.isEmpty || fixedBeacons.isEmpty ? nil
            : RoomDecider(map: map, model: phoneModel, survey: map.survey, configuration: configuration.phoneRooms, wallLosses: phoneRooms?.wallLosses)
    }

    /// The calibration's name for the phone that took the map's survey.
    public static let surveyReceiver = "survey"

    private func roomDecider(for subject: TrackedSubject) -> RoomDecider? {
        switch subject {
        case .beacon: beaconRooms
        case .phone: phoneRooms
        }
    }

    public var subjectCount: Int { subjects.count }

    /// Entries the per-cycle sweep still walks: recent hearings and subjects fading out. It
    /// follows the subjects heard in the last quarter minute, not all those ever heard.
    var backlog: Int { heard.count + fading.count }

    /// Feeds one gateway's accepted batch, in time order; returns the room changes it caused.
    public mutating func receive(_ sightings: [Sighting], gateway: String) -> [SubjectRoomChange] {
        var changes: [SubjectRoomChange] = []
        for sighting in sightings.sorted(by: { $0.time < $1.time }) {
            guard Self.isUsable(sighting.time) else { continue }
            changes += advance(to: sighting.time)
            guard let rssi = sighting.rssi, let frame = sighting.frame.iBeacon, let cycle = openCycle else { continue }
            let value = Double(rssi)
            if let beacon = fixedBeacons[frame.identity] {
                if let receiver = positionedReceivers[gateway] {
                    pendingLinks[beacon, default: [:]][receiver, default: (0, 0)].sum += value
                    pendingLinks[beacon]![receiver]!.count += 1
                } else if !receiverNames.contains(gateway) {
                    let mapped = map.beacons[beacon]
                    let shift = phoneModel.power(of: mapped) - Self.referencePower
                    changes += hear(.phone(gateway), anchor: beacon, presenceReceiver: mapped.id, rssi: value, corrected: value - shift,
                                    power: Self.referencePower, at: sighting.time, cycle: cycle)
                }
            } else if receiverNames.contains(gateway) {
                let power = frame.measuredPower.isUsableForDistance ? Double(frame.measuredPower.dBm) : baseModel.defaultPower
                let corrected = value - model.gain(of: gateway)
                changes += hear(.beacon(frame.identity), anchor: positionedReceivers[gateway], presenceReceiver: gateway, rssi: value,
                                corrected: corrected, power: power, at: sighting.time, cycle: cycle)
            }
        }
        return changes
    }

    /// One packet of a subject. `rssi` is the raw reading (for the anchor sums, corrected at
    /// the cycle's end); `corrected` removes the receiver's gain or the beacon's power, so
    /// rooms compare like with like.
    private mutating func hear(_ subject: TrackedSubject, anchor: Int?, presenceReceiver: String, rssi: Double, corrected: Double,
                               power: Double, at time: Double, cycle: Int) -> [SubjectRoomChange] {
        var changes: [SubjectRoomChange] = []
        if subjects[subject] == nil {
            if subjects.count >= configuration.maximumSubjects { changes += evictStalest() }
            let presence = if case .phone = subject { phoneRoomPresence } else { beaconRoomPresence }
            subjects[subject] = Subject(rooms: roomDecider(for: subject) != nil ? .decider(nil) : .presence(presence), lastHeard: time,
                                        lastCycle: cycle - 1, power: power)
        }
        var state = subjects.removeValue(forKey: subject)!
        // Packets from another gateway's batch may be older than this subject's latest: room
        // presence sees time move forward only.
        let time = max(time, state.lastHeard)
        state.lastHeard = time
        state.power = power
        if state.lastCycle != cycle {
            state.lastCycle = cycle
            heard.append((subject, cycle))
        }
        let byPresence = if case .presence = state.rooms { true } else { false }
        subjects[subject] = state
        if byPresence {
            pendingPresence[subject, default: [:]][presenceReceiver, default: (0, 0)].sum += corrected
            pendingPresence[subject]![presenceReceiver]!.count += 1
        }
        if let anchor {
            pending[subject, default: [:]][anchor, default: (0, 0)].sum += rssi
            pending[subject]![anchor]!.count += 1
        }
        return changes
    }

    /// Moves the site's clock: closes every cycle that ended by `time`. Gateways' batches
    /// interleave, so a sighting older than the open cycle is counted in it.
    public mutating func advance(to time: Double) -> [SubjectRoomChange] {
        guard Self.isUsable(time) else { return [] }
        if latestTime.map({ time > $0 }) ?? true { latestTime = time }
        let cycle = Int((time / configuration.cycle).rounded(.down))
        guard let open = openCycle else {
            openCycle = cycle
            return []
        }
        guard cycle > open else { return [] }
        let changes = closeCycle(open, end: Double(cycle) * configuration.cycle)
        openCycle = cycle
        return changes
    }

    /// Times the cycle arithmetic can hold (the server's window admits far less: days around now).
    static func isUsable(_ time: Double) -> Bool { time.isFinite && abs(time) < 1e12 }

    private mutating func closeCycle(_ cycle: Int, end: Double) -> [SubjectRoomChange] {
        let cycleEnd = Double(cycle + 1) * configuration.cycle
        let located = locatePending(at: cycleEnd)
        calibrate(cycle: cycle)
        return located + decideRooms(at: cycleEnd) + sweepSilent(cycle: cycle, end: end)
    }

    /// Room presence sees each subject once per cycle: every receiver's mean of the cycle, all
    /// at the cycle's end, strongest first. Gateways post their batches at different moments,
    /// so feeding packets as batches arrive would let whichever gateway posted first decide a
    /// new subject's room; within one cycle the arrival order no longer matters.
    private mutating func decideRooms(at time: Double) -> [SubjectRoomChange] {
        let work = pendingPresence
        pendingPresence = [:]
        var changes: [SubjectRoomChange] = []
        for (subject, sums) in work.sorted(by: { $0.key < $1.key }) {
            guard var state = subjects[subject], case .presence(var presence) = state.rooms else { continue }
            let levels = sums.map { (receiver: $0.key, level: $0.value.sum / Double($0.value.count)) }
                .sorted { ($0.level, $1.receiver) > ($1.level, $0.receiver) }
            for entry in levels {
                changes += presence.observe(subject: "", receiver: entry.receiver, rssi: entry.level, at: time)
                    .map { SubjectRoomChange(subject: subject, room: $0.room, kind: $0.kind, time: $0.time) }
            }
            state.rooms = .presence(presence)
            subjects[subject] = state
        }
        return changes
    }

    /// Locates every subject heard in the cycle and, where the room decider decides its rooms,
    /// feeds it the same readings. The events come out in subject order, so their order does not
    /// depend on the dictionary's (only the few subjects with events are sorted: comparing
    /// subjects builds their names).
    private mutating func locatePending(at time: Double) -> [SubjectRoomChange] {
        let work = pending
        pending = [:]
        var changes: [(subject: TrackedSubject, events: [RoomEvent])] = []
        for (subject, sums) in work {
            guard var state = subjects[subject] else { continue }
            let readings: [Reading]
            switch subject {
            case .phone:
                readings = sums.map { Reading(beacon: $0.key, rssi: $0.value.sum / Double($0.value.count) - phoneModel.gain(of: subject.name)) }
                    .sorted { $0.beacon < $1.beacon }
            case .beacon:
                let shift = state.power - Self.referencePower
                readings = sums.map { entry in
                    Reading(beacon: entry.key, rssi: entry.value.sum / Double(entry.value.count) - model.gain(of: anchorMap.beacons[entry.key].id) - shift)
                }.sorted { $0.beacon < $1.beacon }
            }
            // Where the room decider decides, its fingerprint fix (with a tag survey) or its
            // trilateration (the map's walls modelled) is the position too; elsewhere
            // trilateration without walls locates the readings.
            var decided: [LocateMethod: Fix] = [:]
            if case .decider(var track) = state.rooms {
                // The readings are already corrected, so the decider's receiver has no gain.
                let decision = switch subject {
                case .beacon: Self.decide(&beaconRooms, &track, particles: &state.particles, readings: readings, time: time)
                case .phone: Self.decide(&phoneRooms, &track, particles: &state.particles, readings: readings, time: time)
                }
                state.rooms = .decider(track)
                if let decision {
                    decided = decision.fixes
                    if !decision.events.isEmpty { changes.append((subject, decision.events)) }
                }
            }
            let fix = decided[.fingerprint] ?? decided[.trilateration] ?? decided[.particle] ?? {
                switch subject {
                case .phone: beaconLocator.locate(readings)
                case .beacon: receiverLocator.locate(readings)
                }
            }()
            if let fix {
                fixCount += 1
                state.fix = fix
                state.fixTime = time
                state.anchors = sums.count
            }
            subjects[subject] = state
        }
        return changes.sorted { $0.subject < $1.subject }.flatMap { entry in
            entry.events.map { SubjectRoomChange(subject: entry.subject, room: $0.room, kind: $0.kind, time: $0.time) }
        }
    }

    /// One cycle of a subject's corrected readings through its room decider, with the
    /// subject's own particle filter where the decider runs one.
    private static func decide(_ decider: inout RoomDecider?, _ track: inout RoomFilter.Track?, particles: inout ParticleFilter?,
                               readings: [Reading], time: Double) -> RoomDecider.Decision? {
        guard decider != nil else { return nil }
        if decider!.usesParticles {
            return decider!.decide(&track, particles: &particles, subject: "", readings: readings, receiver: "", time: time)
        }
        return decider!.decide(&track, subject: "", readings: readings, receiver: "", time: time)
    }

    /// Adds the cycle's link means to both calibrators (corrected for the walls between, which
    /// the fit does not model) and refits every `calibrationInterval` seconds.
    private mutating func calibrate(cycle: Int) {
        guard !pendingLinks.isEmpty else { return }
        for (beaconIndex, receivers) in pendingLinks {
            let beacon = map.beacons[beaconIndex]
            for (receiverIndex, sums) in receivers {
                let receiver = anchorMap.beacons[receiverIndex]
                let horizontal = beacon.position.distance(to: receiver.position)
                let slant = (horizontal * horizontal + model.heightOffset * model.heightOffset).squareRoot()
                let walls = map.wallLoss(from: beacon.position, to: receiver.position)
                let rssi = sums.sum / Double(sums.count) + walls
                calibrator.add(beacon: beacon.id, receiver: receiver.id, distance: slant, rssi: rssi)
                surveyCalibrator?.add(beacon: beacon.id, receiver: receiver.id, distance: slant, rssi: rssi)
            }
        }
        pendingLinks = [:]
        let interval = Int((configuration.calibrationInterval / configuration.cycle).rounded(.up))
        if let last = lastFitCycle, cycle - last < interval { return }
        lastFitCycle = cycle
        refit(at: Double(cycle + 1) * configuration.cycle)
    }

    /// `time`: the gateways' clock at the refit, nil for the survey's fit at the start.
    private mutating func refit(at time: Double?) {
        let fitted = calibrator.fit()
        let surveyed = surveyCalibrator?.fit()
        guard fitted != nil || surveyed != nil else { return }
        if let fitted {
            calibration = fitted
            model = fitted.applied(to: baseModel)
        }
        if let surveyed { surveyCalibration = surveyed }
        phoneModel = surveyCalibration?.applied(to: baseModel) ?? model
        if time != nil { calibratedAt = time }
        beaconLocator = RobustTrilateration(anchors: AnchorSet(map: map, model: phoneModel))
        receiverLocator = RobustTrilateration(anchors: AnchorSet(map: anchorMap, model: PathLossModel(exponent: model.exponent)))
        makeRoomDeciders()
    }

    /// Subjects unheard for the shortest absence leave the queue of recent hearings for the
    /// fading set; each cycle the fading subjects' rooms are advanced (exits after silence),
    /// until they are heard again or every link has run out.
    private mutating func sweepSilent(cycle: Int, end: Double) -> [SubjectRoomChange] {
        let quiet = Int((configuration.presence.absence.lowerBound / configuration.cycle).rounded(.down))
        while let first = heard.first, first.cycle <= cycle - quiet {
            heard.removeFirst()
            if subjects[first.subject]?.lastCycle == first.cycle { fading.insert(first.subject) }
        }
        var changes: [SubjectRoomChange] = []
        for subject in fading.sorted() {
            guard var state = subjects[subject], state.lastCycle <= cycle - quiet else {
                fading.remove(subject)
                continue
            }
            let events: [RoomEvent]
            switch state.rooms {
            case .presence(var presence):
                events = presence.advance(to: end)
                state.rooms = .presence(presence)
            case .decider(var track):
                events = roomDecider(for: subject)?.advance(&track, subject: "", to: end) ?? []
                state.rooms = .decider(track)
            }
            changes += events.map { SubjectRoomChange(subject: subject, room: $0.room, kind: $0.kind, time: $0.time) }
            if room(of: subject, state) == nil && end - state.lastHeard > configuration.presence.absence.upperBound {
                fading.remove(subject)
            }
            subjects[subject] = state
        }
        return changes
    }

    /// Drops the stalest tenth of the subjects (at least one), with an exit for each that was
    /// in a room: an evicted subject must not stay present for ever on the feed.
    private mutating func evictStalest() -> [SubjectRoomChange] {
        let count = max(1, subjects.count / 10)
        let stalest = subjects.sorted { ($0.value.lastHeard, $0.key) < ($1.value.lastHeard, $1.key) }.prefix(count)
        var changes: [SubjectRoomChange] = []
        for (subject, state) in stalest {
            if let room = room(of: subject, state) {
                changes.append(SubjectRoomChange(subject: subject, room: room, kind: .exit, time: max(state.lastHeard, lastTime)))
            }
            subjects[subject] = nil
            pending[subject] = nil
            pendingPresence[subject] = nil
            fading.remove(subject)
        }
        evictedSubjects += count
        return changes
    }

    private var lastTime: Double { Double(openCycle ?? 0) * configuration.cycle }

    /// Everything known of every subject, beacons first, then phones, each by name.
    public var positions: [SubjectPosition] {
        subjects.sorted { $0.key < $1.key }.map { describe($0.key, $0.value) }
    }

    /// The subject with this name (`UUID:major:minor` or a phone's gateway name).
    public func position(of name: String) -> SubjectPosition? {
        let subject: TrackedSubject = if let identity = Self.identity(name) { .beacon(identity) } else { .phone(name) }
        return subjects[subject].map { describe(subject, $0) }
    }

    /// The subject's room: its room decider's, or its room presence's.
    private func room(of subject: TrackedSubject, _ state: Subject) -> String? {
        switch state.rooms {
        case .presence(let presence): presence.room(of: "")
        case .decider(let track): roomDecider(for: subject)?.room(of: track)
        }
    }

    private func describe(_ subject: TrackedSubject, _ state: Subject) -> SubjectPosition {
        var identity: BeaconIdentity?
        if case .beacon(let beacon) = subject { identity = beacon }
        return SubjectPosition(subject: subject.name, kind: subject.kind, uuid: identity?.uuid, major: identity?.major, minor: identity?.minor,
                               x: state.fix?.position.x, y: state.fix?.position.y, uncertainty: state.fix?.uncertainty,
                               method: state.fix?.method.rawValue, fixTime: state.fixTime, room: room(of: subject, state),
                               lastHeard: state.lastHeard, anchors: state.anchors)
    }

    public static func identity(_ name: String) -> BeaconIdentity? {
        let parts = name.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let uuid = UUID(uuidString: String(parts[0])), let major = UInt16(parts[1]), let minor = UInt16(parts[2]) else {
            return nil
        }
        return BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }
}
