import BeaconKit
import Foundation

/// Runs the monitoring and ranging engine on a simulated stream and measures it against ground
/// truth: enter and exit latency, false enters and exits, ranging error by true distance and a
/// proximity confusion matrix, for several engine configurations side by side.
///
/// Each receiver gets its own engines (one engine models one phone). Ground truth membership is
/// sampled every `truthStep` seconds from `Scenario.trueRegions`; engines are advanced at the
/// same instants, so exits in silence are seen.
public struct Evaluation: Sendable {
    /// One engine configuration under test and what it is compared on.
    public struct Variant: Sendable, Hashable {
        public var name: String
        public var configuration: EngineConfiguration
        public var measuresMonitoring: Bool
        public var measuresRanging: Bool

        public init(name: String, configuration: EngineConfiguration, measuresMonitoring: Bool, measuresRanging: Bool) {
            self.name = name
            self.configuration = configuration
            self.measuresMonitoring = measuresMonitoring
            self.measuresRanging = measuresRanging
        }

        /// The engine's defaults, then one change at a time: filters, distance models, exit rules.
        /// Filters and distance models do not change monitoring, and exit rules do not change
        /// ranging, so each row measures only what it can change.
        public static let standard: [Variant] = {
            let base = EngineConfiguration()
            func with(_ change: (inout EngineConfiguration) -> Void) -> EngineConfiguration {
                var configuration = base
                change(&configuration)
                return configuration
            }
            return [
                Variant(name: "default: Kalman, robust log-distance, evidence exit", configuration: base,
                        measuresMonitoring: true, measuresRanging: true),
                Variant(name: "filter: ARMA 0.1 (AltBeacon)", configuration: with { $0.filter = .altBeaconARMA },
                        measuresMonitoring: false, measuresRanging: true),
                Variant(name: "filter: trimmed mean 20 s (AltBeacon)", configuration: with { $0.filter = .altBeaconRunningAverage },
                        measuresMonitoring: false, measuresRanging: true),
                Variant(name: "filter: none (latest sample)", configuration: with { $0.filter = .none },
                        measuresMonitoring: false, measuresRanging: true),
                Variant(name: "distance: log-distance n=2 (free space)", configuration: with { $0.distance.model = .freeSpace },
                        measuresMonitoring: false, measuresRanging: true),
                Variant(name: "distance: curve fit Nexus 5 (AltBeacon)", configuration: with { $0.distance.model = .altBeaconDefault },
                        measuresMonitoring: false, measuresRanging: true),
                Variant(name: "distance: bleacon", configuration: with { $0.distance.model = .bleacon },
                        measuresMonitoring: false, measuresRanging: true),
                Variant(name: "exit: fixed 10 s (AltBeacon)", configuration: with { $0.exitRule = .altBeacon },
                        measuresMonitoring: true, measuresRanging: false),
                Variant(name: "exit: fixed 30 s (iOS-like)", configuration: with { $0.exitRule = .iOSLike },
                        measuresMonitoring: true, measuresRanging: false),
                Variant(name: "exit: adaptive (before issue 11)", configuration: with { $0.exitRule = .adaptiveDefault },
                        measuresMonitoring: true, measuresRanging: false),
            ]
        }()
    }

    public var scenario: Scenario
    public var variants: [Variant]
    /// Seconds between ground-truth samples (and engine clock advances).
    public var truthStep: Double = 0.1
    /// An engine event matches a truth event of the same kind from `matchBefore` seconds after
    /// it (early detection, possible because packets are heard beyond the presence range) to
    /// `matchAfter` seconds after it. Unmatched engine events are false; unmatched truth events
    /// are missed.
    public var matchBefore: Double = 60
    public var matchAfter: Double = 120
    /// Width in dB of the edge of range below the presence threshold. Truth enters a region when
    /// a matching beacon's mean power reaches the threshold and leaves it when every matching
    /// beacon falls more than this below it; in between the truth keeps its last state.
    public var edgeMargin: Double = 6
    /// Seconds of the RSSI trace kept for the plot.
    public var traceDuration: Double = 300

    public init(scenario: Scenario, variants: [Variant] = Variant.standard) {
        self.scenario = scenario
        self.variants = variants
    }

    /// The standard configurations that measure monitoring, with the default measuring only
    /// monitoring: for long monitoring runs such as the switched-off benchmark.
    public static let monitoringVariants: [Variant] = Variant.standard.filter(\.measuresMonitoring).map {
        var variant = $0
        variant.measuresRanging = false
        return variant
    }

    /// Runs the whole scenario. `progress` receives the simulated fraction done, about 100 times.
    public func run(progress: ((Double) -> Void)? = nil) -> EvaluationReport {
        var simulation = Simulation(scenario: scenario)
        var run = EvaluationRun(self)
        while let item = simulation.next() { run.receive(item, progress: progress) }
        run.finish(progress: progress)
        return run.report(statistics: simulation.statistics)
    }
}

/// A monitoring transition of one receiver for one region.
struct TransitionKey: Hashable, Sendable {
    var receiver: Int
    var region: Int
    var entering: Bool
}

/// Monitoring quality of one configuration.
public struct MonitoringResult: Sendable, Hashable {
    /// Engine time minus truth time for matched enters (negative: the engine entered early).
    public var enterLatency: Distribution
    /// Engine time minus truth time for matched exits.
    public var exitLatency: Distribution
    public var falseEnters: Int
    public var falseExits: Int
    public var missedEnters: Int
    public var missedExits: Int
    /// False enters plus false exits per receiver index, to tell gateways from walkers.
    public var falseEventsByReceiver: [Int: Int]
    /// Receiver × beacon identity × simulated hours.
    public var beaconHours: Double

    public var falseEntersPerBeaconHour: Double { Double(falseEnters) / beaconHours }
    public var falseExitsPerBeaconHour: Double { Double(falseExits) / beaconHours }

    init(truth: [TransitionKey: [Double]], engine: [TransitionKey: [Double]], before: Double, after: Double, beaconHours: Double) {
        var enters: [Double] = [], exits: [Double] = []
        var falseEnters = 0, falseExits = 0, missedEnters = 0, missedExits = 0
        var byReceiver: [Int: Int] = [:]
        for key in Set(truth.keys).union(engine.keys) {
            let truthTimes = truth[key] ?? [], engineTimes = engine[key] ?? []
            var used = Array(repeating: false, count: engineTimes.count)
            var searchFrom = 0
            for time in truthTimes {
                while searchFrom < engineTimes.count && engineTimes[searchFrom] < time - before { searchFrom += 1 }
                var match: Int?
                var candidate = searchFrom
                while candidate < engineTimes.count && engineTimes[candidate] <= time + after {
                    if !used[candidate] { match = candidate; break }
                    candidate += 1
                }
                if let match {
                    used[match] = true
                    (key.entering ? { enters.append(engineTimes[match] - time) } : { exits.append(engineTimes[match] - time) })()
                } else if key.entering {
                    missedEnters += 1
                } else {
                    missedExits += 1
                }
            }
            let unmatched = used.filter { !$0 }.count
            byReceiver[key.receiver, default: 0] += unmatched
            if key.entering { falseEnters += unmatched } else { falseExits += unmatched }
        }
        enterLatency = Distribution(enters)
        exitLatency = Distribution(exits)
        self.falseEnters = falseEnters
        self.falseExits = falseExits
        self.missedEnters = missedEnters
        self.missedExits = missedExits
        self.falseEventsByReceiver = byReceiver
        self.beaconHours = beaconHours
    }
}

/// Ranging quality of one configuration.
public struct RangingResult: Sendable, Hashable {
    /// Absolute error |accuracy − true distance| by band of true distance.
    public var errorByBand: [DistanceBand: Distribution]
    public var overall: Distribution
    /// Estimates the model could not make (accuracy −1) while the beacon was heard.
    public var unknownEstimates: Int
    /// Rows: true immediate, near, far. Columns: reported unknown, immediate, near, far.
    public var confusion: [[Int]]
    /// Sorted absolute errors, for a CDF.
    public var sortedErrors: [Double]

    /// The share of the reported zones that match the true zone.
    public var proximityAgreement: Double {
        let total = confusion.flatMap { $0 }.reduce(0, +)
        guard total > 0 else { return .nan }
        return Double(confusion[0][1] + confusion[1][2] + confusion[2][3]) / Double(total)
    }
}

struct RangingAccumulator: Sendable {
    var errors: [[Double]] = Array(repeating: [], count: DistanceBand.allCases.count)
    var unknown = 0
    var confusion = Array(repeating: Array(repeating: 0, count: 4), count: 3)

    mutating func add(accuracy: Double, proximity: Proximity, trueDistance: Double) {
        let trueZone = trueDistance < 0.5 ? 0 : trueDistance < 3 ? 1 : 2
        confusion[trueZone][Int(proximity.rawValue)] += 1
        guard accuracy >= 0 else { unknown += 1; return }
        errors[DistanceBand(distance: trueDistance).rawValue].append(abs(accuracy - trueDistance))
    }

    func result() -> RangingResult {
        var byBand: [DistanceBand: Distribution] = [:]
        for band in DistanceBand.allCases where !errors[band.rawValue].isEmpty { byBand[band] = Distribution(errors[band.rawValue]) }
        let all = errors.flatMap { $0 }.sorted()
        return RangingResult(errorByBand: byBand, overall: Distribution(all), unknownEstimates: unknown,
                             confusion: confusion, sortedErrors: all)
    }
}

/// Results of one configuration; nil where it is not compared.
public struct VariantResult: Sendable, Hashable {
    public var name: String
    public var monitoring: MonitoringResult?
    public var ranging: RangingResult?
}

/// RSSI of one receiver–beacon pair over time, with the default filter's output and the truth.
public struct RSSITrace: Sendable, Hashable {
    public var receiver: String
    public var beacon: String
    public var samples: [(time: Double, rssi: Double, filtered: Double, trueMean: Double)]

    public static func == (lhs: RSSITrace, rhs: RSSITrace) -> Bool {
        lhs.receiver == rhs.receiver && lhs.beacon == rhs.beacon && lhs.samples.count == rhs.samples.count
            && zip(lhs.samples, rhs.samples).allSatisfy { $0.time == $1.time && $0.rssi == $1.rssi && $0.filtered == $1.filtered }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(receiver); hasher.combine(beacon); hasher.combine(samples.count)
    }
}

/// Collects the first minutes of one receiver's sightings, then keeps the beacon heard most.
struct TraceCollector: Sendable {
    let receiver: Int
    let until: Double
    var byBeacon: [String: [(time: Double, rssi: Int8, trueMean: Double)]] = [:]

    init(receiver: Int, until: Double) {
        self.receiver = receiver
        self.until = until
    }

    mutating func add(_ item: SimulatedSighting, receiver: Int) {
        guard receiver == self.receiver, item.sighting.time < until, let rssi = item.sighting.rssi,
              item.sighting.frame.iBeacon != nil else { return }
        byBeacon[item.truth.beacon, default: []].append((item.sighting.time, rssi, item.truth.meanPower))
    }

    func finish(scenario: Scenario) -> RSSITrace {
        let name = scenario.receivers.indices.contains(receiver) ? scenario.receivers[receiver].name : ""
        guard let (beacon, samples) = byBeacon.max(by: { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) }) else {
            return RSSITrace(receiver: name, beacon: "", samples: [])
        }
        var filter = RSSIFilterChannel(filter: .default)
        let filtered = samples.map { sample in
            (time: sample.time, rssi: Double(sample.rssi), filtered: filter.add(rssi: sample.rssi, time: sample.time), trueMean: sample.trueMean)
        }
        return RSSITrace(receiver: name, beacon: beacon, samples: filtered)
    }
}

/// Everything `proxima evaluate` reports.
public struct EvaluationReport: Sendable, Hashable {
    public var scenarioName: String
    public var duration: Double
    public var receivers: Int
    public var identities: Int
    public var regions: Int
    public var beaconHours: Double
    public var statistics: SimulationStatistics
    public var truthEnters: Int
    public var truthExits: Int
    public var variants: [VariantResult]
    public var trace: RSSITrace
    /// Receiver names in scenario order.
    public var receiverNames: [String]?
    /// The switched-off benchmark (EvaluationByRate.swift), when the scenario switches beacons off.
    public var switchedOff: [SwitchedOffResult]? = nil
}
