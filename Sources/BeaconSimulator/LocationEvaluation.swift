import BeaconKit
import BeaconLocate
import Foundation

/// Measures BeaconLocate against the simulator's truth: where walkers' phones and carried
/// beacons are (each method's position error), which room they are in (accuracy and latency
/// of each room decider) and what the site's self-calibration recovers.
///
/// It runs the scenario twice, as a site would live it: first the fixed receivers hearing the
/// fixed beacons (plus a simulated survey) calibrate the path-loss model; then every second
/// each walker's phone is located from the beacons it heard and each carried beacon from the
/// gateways that heard it, with the calibrated model.
public struct LocationEvaluation: Sendable {
    public var scenario: Scenario
    /// Seconds per fix (sightings are averaged per anchor over a cycle, as `SightingLocator` does).
    public var cycle: Double = 1
    /// Seconds per room decision of a carried beacon: its room filters run their own locators
    /// on this cadence, while its fixes in the position table stay per `cycle`. Half a second
    /// follows a room change sooner than a whole one (docs/evaluation.md, ninth round).
    public var tagRoomCycle: Double = 0.5 {
        didSet { tagRoomCycle = tagRoomCycle.isFinite ? min(max(tagRoomCycle, Self.tagRoomCycles.lowerBound), Self.tagRoomCycles.upperBound) : 0.5 }
    }
    public static let tagRoomCycles: ClosedRange<Double> = 0.1...10
    /// Survey grid spacing (m) and seconds per point; a spacing of 0 means no survey.
    public var surveySpacing: Double = 1.5
    public var surveyDuration: Double = 10
    /// Calibration averages each fixed link's power over windows this long (s).
    public var calibrationWindow: Double = 10
    /// Links whose power, predicted from the advertised power with a pessimistic exponent of 2.5
    /// and the map's walls, is within this many dB of the receivers' sensitivity are left out
    /// of calibration: there the weak packets are lost and the heard ones flatter the mean.
    public var calibrationHeadroom: Double = 12
    /// Runs over this many seeds (the scenario's and the ones after it) and pools what they
    /// measured: one seed's 50 room changes put a p95 on its third-slowest change, which moves
    /// by a second from seed to seed (docs/evaluation.md).
    public var seeds = 1 {
        didSet { seeds = min(max(seeds, 1), Self.maximumSeeds) }
    }
    public static let maximumSeeds = 64
    public var fixRooms = FixRoomPresence.Configuration()
    public var roomPresence = RoomPresence.Configuration()
    /// Room deciders from outside this module (the server's tracker), made afresh for each
    /// seed's scenario (with its simulated surveys, empty with no survey) and scored beside
    /// the evaluation's own rows.
    public var siteTrackers: [@Sendable (Scenario, LocationSurveys) -> SiteTrackerRoomDecider] = []

    public init(scenario: Scenario) {
        self.scenario = scenario
    }

    /// Whether the scenario has something to locate: rooms, or at least two fixed receivers.
    public var applies: Bool {
        !scenario.rooms.isEmpty || scenario.receivers.filter { if case .fixed = $0.placement { true } else { false } }.count >= 2
    }

    /// Calibration is reported from the scenario's own seed, the first run.
    public func run() -> LocationReport {
        let seedList = (0..<seeds).map { scenario.seed &+ UInt64($0) }
        var tally = LocationTally()
        var first: (calibration: LocationReport.Calibration?, surveyPoints: Int)?
        for seed in seedList {
            var evaluation = self
            evaluation.scenario.seed = seed
            let run = evaluation.singlePass()
            tally.add(run.tally)
            if first == nil { first = (run.calibration, run.surveyPoints) }
        }
        return LocationReport(cycle: cycle, tagRoomCycle: tagRoomCycle, surveyPoints: first?.surveyPoints ?? 0, positions: tally.positionErrors, rooms: tally.roomResults,
                              calibration: first?.calibration, seeds: seedList)
    }

    private func singlePass() -> (tally: LocationTally, calibration: LocationReport.Calibration?, surveyPoints: Int) {
        let map = scenario.siteMap
        let anchorIndex = Dictionary(map.beacons.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        let gateways = map.receivers.map(\.name)
        let walkers = scenario.receivers.filter { if case .walking = $0.placement { true } else { false } }
        let tags = scenario.beacons.filter { $0.path != nil }

        let grid = surveySpacing > 0 ? SimulatedSurvey.grid(scenario, spacing: surveySpacing) : []
        let phoneHeight = walkers.first.map { scenario.state(of: $0, at: 0).position.z } ?? 1.2
        let phoneSurvey = grid.isEmpty || map.beacons.isEmpty ? nil
            : SimulatedSurvey.phones(scenario, grid: grid, height: phoneHeight, duration: surveyDuration, anchorIndex: anchorIndex)

        let calibration = calibrate(map: map, survey: phoneSurvey)
        var model = PathLossModel(exponent: 2)
        if let fit = calibration?.fit { model = fit.applied(to: model) }

        var pass = LocationPass(scenario: scenario, map: map, model: model, cycle: cycle, tagRoomCycle: tagRoomCycle, phoneSurvey: phoneSurvey?.fingerprints ?? [],
                                walkers: walkers.map(\.name), tags: tags, gateways: gateways, fixRooms: fixRooms, roomPresence: roomPresence)
        var surveys = LocationSurveys(phones: phoneSurvey?.fingerprints ?? [])
        if let tag = tags.first, !grid.isEmpty, gateways.count >= 2 {
            let survey = SimulatedSurvey.tags(scenario, grid: grid, like: tag, height: tag.position.z, duration: surveyDuration, gateways: gateways)
            pass.tagSurvey = survey.fingerprints
            // The map's receivers are the gateways, in the same order.
            surveys.tags = survey.fingerprints.map { TagSurveyPoint(position: $0.position, measuredPower: Double(tag.measuredPower.dBm), readings: $0.readings) }
        }
        pass.siteTrackers = siteTrackers.map { $0(scenario, surveys) }
        var simulation = Simulation(scenario: scenario)
        while let item = simulation.next() { pass.receive(item) }
        pass.finish()
        return (pass.tally(), calibration.map { $0.result }, grid.count)
    }

    struct CalibrationOutcome {
        var fit: SiteCalibration
        var result: LocationReport.Calibration
    }

    /// Fits the model from fixed receivers hearing fixed beacons (window means of linear power,
    /// corrected by the map's walls) and from the survey, then compares with the scenario.
    private func calibrate(map: SiteMap, survey: SimulatedSurvey?) -> CalibrationOutcome? {
        let fixedBeacons = Dictionary(scenario.beacons.filter { $0.path == nil }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var fixedReceivers: [String: (point: Position3D, gain: Double)] = [:]
        for receiver in scenario.receivers {
            if case .fixed(let point) = receiver.placement { fixedReceivers[receiver.name] = (point, receiver.antennaGain) }
        }
        var calibrator = SiteCalibrator(priorPower: Dictionary(map.beacons.compactMap { beacon in beacon.measuredPower.map { (beacon.id, $0) } },
                                                               uniquingKeysWith: { first, _ in first }))
        let sensitivity = scenario.channel.sensitivity
        func usable(_ beacon: SimulatedBeacon, at point: Position3D, distance: Double, walls: Double) -> Bool {
            Double(beacon.measuredPower.dBm) - 25 * log10(max(0.1, distance)) - walls >= sensitivity + calibrationHeadroom
        }
        // Gateways: a window of linear power per link, fed as one reading when the window closes.
        struct Window { var index = -1; var sum = 0.0; var count = 0; var distance = 0.0 }
        var windows: [String: [String: Window]] = [:]
        var wallLoss: [String: [String: Double]] = [:]
        var receiversInFit: Set<String> = []
        func flush(_ window: Window, beacon: String, receiver: String, calibrator: inout SiteCalibrator) {
            guard window.count > 0 else { return }
            calibrator.add(beacon: beacon, receiver: receiver, distance: window.distance,
                           rssi: 10 * log10(window.sum / Double(window.count)) + (wallLoss[receiver]?[beacon] ?? 0))
        }
        if !fixedReceivers.isEmpty {
            var simulation = Simulation(scenario: scenario)
            while let item = simulation.next() {
                guard let rssi = item.sighting.rssi, let receiver = fixedReceivers[item.sighting.receiver],
                      let beacon = fixedBeacons[item.truth.beacon] else { continue }
                let name = item.sighting.receiver
                if wallLoss[name]?[beacon.name] == nil {
                    let loss = map.wallLoss(from: beacon.position.plan, to: receiver.point.plan)
                    wallLoss[name, default: [:]][beacon.name] = usable(beacon, at: receiver.point, distance: item.truth.distance, walls: loss) ? loss : .nan
                }
                guard wallLoss[name]![beacon.name]!.isFinite else { continue }
                receiversInFit.insert(name)
                let index = Int(item.sighting.time / calibrationWindow)
                var window = windows[name, default: [:]][beacon.name] ?? Window()
                if window.index != index {
                    flush(window, beacon: beacon.name, receiver: name, calibrator: &calibrator)
                    window = Window(index: index, sum: 0, count: 0, distance: item.truth.distance)
                }
                window.sum += pow(10, Double(rssi) / 10)
                window.count += 1
                windows[name, default: [:]][beacon.name] = window
            }
            for (receiver, byBeacon) in windows {
                for (beacon, window) in byBeacon { flush(window, beacon: beacon, receiver: receiver, calibrator: &calibrator) }
            }
        }
        if let survey {
            for point in survey.points {
                for (anchor, link) in point.links {
                    let mapped = map.beacons[anchor]
                    guard let beacon = fixedBeacons[mapped.id] else { continue }
                    let loss = map.wallLoss(from: mapped.position, to: point.position)
                    guard usable(beacon, at: Position3D(point.position), distance: link.distance, walls: loss) else { continue }
                    receiversInFit.insert("survey")
                    calibrator.add(beacon: mapped.id, receiver: "survey", distance: link.distance, rssi: link.meanPower + loss)
                }
            }
        }
        guard let fit = calibrator.fit() else { return nil }
        let gains = receiversInFit.map { fixedReceivers[$0]?.gain ?? 0 }
        let meanGain = gains.isEmpty ? 0 : gains.reduce(0, +) / Double(gains.count)
        var powerErrors: [String: Double] = [:]
        for (name, power) in fit.beaconPower {
            guard let beacon = fixedBeacons[name] else { continue }
            powerErrors[name] = power - (beacon.txPower - scenario.channel.referenceLoss + meanGain)
        }
        var gainErrors: [String: Double] = [:]
        for (name, gain) in fit.receiverGain {
            gainErrors[name] = gain - ((fixedReceivers[name]?.gain ?? 0) - meanGain)
        }
        return CalibrationOutcome(fit: fit, result: LocationReport.Calibration(
            trueExponent: scenario.channel.pathLossExponent, fittedExponent: fit.exponent, powerErrors: powerErrors,
            gainErrors: gainErrors, links: fit.links, residualSpread: fit.residualSpread))
    }
}
