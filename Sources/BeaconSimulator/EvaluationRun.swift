import BeaconKit
import Foundation

/// One pass of an `Evaluation` over its scenario: per receiver an engine for each variant, the
/// ground truth sampled every `truthStep` seconds, and what both produced so far. It is advanced
/// by mutating steps in time order (`receive` each sighting, then `finish`) and read by `report`.
struct EvaluationRun {
    private let evaluation: Evaluation
    private var scenario: Scenario { evaluation.scenario }
    private let receiverIndex: [String: Int]
    private let regionIndex: [String: Int]
    private let transmittersByIdentity: [BeaconIdentity: [SimulatedBeacon]]

    /// `engines[receiver][variant]`: one engine models one phone.
    private var engines: [[BeaconEngine]]
    private var truthEvents: [TransitionKey: [Double]] = [:]
    /// Per variant, the engines' enters and exits.
    private var engineEvents: [[TransitionKey: [Double]]]
    /// Per receiver, the regions the truth has it inside.
    private var truthInside: [Set<Int>]
    private var ranging: [RangingAccumulator]
    private var trace: TraceCollector
    /// Packets per fixed receiver and beacon, for the switched-off benchmark.
    private var rates: RateAccumulator
    /// Scratch buffer the engines append events to; emptied after each absorb.
    private var pendingEvents: [BeaconEvent] = []
    private var nextSample = 0.0
    private var nextProgress = 0.0

    init(_ evaluation: Evaluation) {
        self.evaluation = evaluation
        let scenario = evaluation.scenario
        let variants = evaluation.variants
        let regions = scenario.monitoringRegions
        let uuids = Array(Set(scenario.beacons.map(\.identity.uuid))).sorted { $0.uuidString < $1.uuidString }
        var transmitters: [BeaconIdentity: [SimulatedBeacon]] = [:]
        for beacon in scenario.beacons { transmitters[beacon.identity, default: []].append(beacon) }
        transmittersByIdentity = transmitters
        engines = scenario.receivers.indices.map { _ in
            variants.map { variant in
                var engine = BeaconEngine(configuration: variant.configuration)
                if variant.measuresMonitoring {
                    for region in regions { _ = try? engine.startMonitoring(region, at: 0) }
                }
                if variant.measuresRanging {
                    for uuid in uuids {
                        if let region = try? BeaconRegion(identifier: "ranging \(uuid.uuidString)", uuid: uuid) { engine.startRanging(region) }
                    }
                }
                return engine
            }
        }
        receiverIndex = Dictionary(uniqueKeysWithValues: scenario.receivers.enumerated().map { ($1.name, $0) })
        regionIndex = Dictionary(scenario.regions.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        engineEvents = Array(repeating: [:], count: variants.count)
        truthInside = Array(repeating: [], count: scenario.receivers.count)
        ranging = Array(repeating: RangingAccumulator(), count: variants.count)
        rates = RateAccumulator(scenario: scenario)
        trace = TraceCollector(receiver: scenario.receivers.firstIndex { if case .walking = $0.placement { true } else { false } } ?? 0,
                               until: evaluation.traceDuration)
    }

    /// Brings the truth and every engine's clock up to the sighting, then gives it to the
    /// engines of the receiver that heard it.
    mutating func receive(_ item: SimulatedSighting, progress: ((Double) -> Void)?) {
        sampleTruth(until: item.sighting.time, progress: progress)
        guard let receiver = receiverIndex[item.sighting.receiver] else { return }
        trace.add(item, receiver: receiver)
        rates.add(item.sighting, receiver: receiver)
        for variant in evaluation.variants.indices {
            engines[receiver][variant].receive(item.sighting, into: &pendingEvents)
            if !pendingEvents.isEmpty { absorbPendingEvents(receiver: receiver, variant: variant) }
        }
    }

    /// Samples the truth to the end of the scenario, so exits in the final silence are seen.
    mutating func finish(progress: ((Double) -> Void)?) {
        sampleTruth(until: scenario.duration, progress: progress)
        progress?(1)
    }

    /// Every truth sample due up to `time`: each receiver's regions at that instant, and each
    /// engine advanced to it.
    private mutating func sampleTruth(until time: Double, progress: ((Double) -> Void)?) {
        while nextSample <= time {
            for receiver in scenario.receivers.indices {
                sampleTruth(receiver: receiver, at: nextSample)
                for variant in evaluation.variants.indices {
                    engines[receiver][variant].advance(to: nextSample, into: &pendingEvents)
                    if !pendingEvents.isEmpty { absorbPendingEvents(receiver: receiver, variant: variant) }
                }
            }
            if let progress, nextSample >= nextProgress {
                progress(min(1, nextSample / scenario.duration))
                nextProgress += scenario.duration / 100
            }
            nextSample += evaluation.truthStep
        }
    }

    private mutating func sampleTruth(receiver: Int, at time: Double) {
        let presence = scenario.regionPresence(of: scenario.receivers[receiver], at: time, edgeMargin: evaluation.edgeMargin)
        // At the edge of range the truth keeps its last definite state.
        let inside = Set(presence.inside).union(truthInside[receiver].intersection(presence.reachable))
        for region in inside.subtracting(truthInside[receiver]) {
            truthEvents[TransitionKey(receiver: receiver, region: region, entering: true), default: []].append(time)
        }
        for region in truthInside[receiver].subtracting(inside) {
            truthEvents[TransitionKey(receiver: receiver, region: region, entering: false), default: []].append(time)
        }
        truthInside[receiver] = inside
    }

    /// Files the events one engine just returned: transitions by region, ranged beacons against
    /// their true distance.
    private mutating func absorbPendingEvents(receiver: Int, variant: Int) {
        for event in pendingEvents {
            switch event {
            case .didEnter(let region, let time):
                if let index = regionIndex[region.identifier] {
                    engineEvents[variant][TransitionKey(receiver: receiver, region: index, entering: true), default: []].append(time)
                }
            case .didExit(let region, let time):
                if let index = regionIndex[region.identifier] {
                    engineEvents[variant][TransitionKey(receiver: receiver, region: index, entering: false), default: []].append(time)
                }
            case .didRange(let beacons, _, let time):
                let position = scenario.state(of: scenario.receivers[receiver], at: time).position
                for beacon in beacons where beacon.packetCount > 0 {
                    guard let transmitters = transmittersByIdentity[beacon.identity] else { continue }
                    let truth = transmitters.map { scenario.position(of: $0, at: time).distance(to: position) }.min() ?? .infinity
                    ranging[variant].add(accuracy: beacon.accuracy, proximity: beacon.proximity, trueDistance: truth)
                }
            case .didDetermineState:
                break
            }
        }
        pendingEvents.removeAll(keepingCapacity: true)
    }

    /// The switched-off benchmark for each configuration that measures monitoring; nil when no
    /// beacon of the scenario is ever switched off.
    private func switchedOffResults() -> [SwitchedOffResult]? {
        let schedule = scenario.switchSchedule()
        guard schedule.contains(where: { !$0.isEmpty }) else { return nil }
        return evaluation.variants.indices.filter { evaluation.variants[$0].measuresMonitoring }.map { variant in
            rates.result(configuration: evaluation.variants[variant].name, scenario: scenario, schedule: schedule,
                         events: engineEvents[variant])
        }
    }

    /// The measurements so far, with the simulation's own statistics.
    func report(statistics: SimulationStatistics) -> EvaluationReport {
        let variants = evaluation.variants
        let receiverCount = scenario.receivers.count
        let identities = Set(scenario.beacons.map(\.identity)).count
        let beaconHours = Double(receiverCount * identities) * scenario.duration / 3600
        let results = variants.indices.map { variant in
            let monitoring = variants[variant].measuresMonitoring
                ? MonitoringResult(truth: truthEvents, engine: engineEvents[variant], before: evaluation.matchBefore,
                                   after: evaluation.matchAfter, beaconHours: beaconHours)
                : nil
            return VariantResult(name: variants[variant].name, monitoring: monitoring,
                                 ranging: variants[variant].measuresRanging ? ranging[variant].result() : nil)
        }
        return EvaluationReport(scenarioName: scenario.name, duration: scenario.duration, receivers: receiverCount,
                                identities: identities, regions: scenario.regions.count, beaconHours: beaconHours,
                                statistics: statistics,
                                truthEnters: truthEvents.filter { $0.key.entering }.map(\.value.count).reduce(0, +),
                                truthExits: truthEvents.filter { !$0.key.entering }.map(\.value.count).reduce(0, +),
                                variants: results, trace: trace.finish(scenario: scenario),
                                receiverNames: scenario.receivers.map(\.name),
                                switchedOff: switchedOffResults())
    }
}
