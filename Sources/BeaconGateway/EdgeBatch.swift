import BeaconKit
import Foundation

/// What `proxima gateway --edge` posts instead of its sightings (docs/server.md, "Edge
/// batches"): the gateway ran the server's own ``GatewayMonitor`` on one batch of sightings and
/// sends what the step decided (enters and exits, the latest ranging reading of each beacon),
/// under the batch's sequence. The server stores them as it stores its own step's results, so a
/// gateway's events and ranging state are the same whichever side ran the engine, provided both
/// use the same settings, which the batch states and the server checks.
///
/// `POST /v1/sightings` with `Content-Type: application/vnd.proxima.edge.v1+json`.
public struct EdgeBatch: Sendable, Hashable, Codable {
    public static let mediaType = "application/vnd.proxima.edge.v1+json"

    public struct Settings: Sendable, Hashable, Codable {
        /// The exit rule by the name `--exit-rule` takes (`evidence`, `adaptive`, `altbeacon`,
        /// `ios`, or seconds), or a rule with other parameters as the engine prints it.
        public var exitRule: String
        public var beaconLimit: Int

        public init(_ settings: GatewaySettings) {
            exitRule = Self.name(of: settings.exitRule)
            beaconLimit = settings.beaconLimit
        }

        static func name(of rule: ExitRule) -> String {
            if case .fixedDelay(let seconds) = rule { return ExitRuleChoice.seconds(seconds).description }
            return ExitRuleChoice.allCases.first { $0.rule == rule }?.description ?? String(describing: rule)
        }

        /// Whether this batch's rule is `rule`: by its name, in any case, or as printed.
        public func names(_ rule: ExitRule) -> Bool {
            ExitRuleChoice(exitRule)?.rule == rule || exitRule == String(describing: rule)
        }

        init(exitRule: String, beaconLimit: Int) {
            self.exitRule = exitRule
            self.beaconLimit = beaconLimit
        }

        /// FNV-1a of the settings, what the compact form carries instead of the exit rule's
        /// long description (sent with every batch, it would outweigh the readings).
        public var digest: UInt64 { FNV1a.hash("\(exitRule)|\(beaconLimit)") }
    }

    public struct Change: Sendable, Hashable, Codable {
        public var uuid: UUID
        public var major: UInt16
        public var minor: UInt16
        /// `enter` or `exit`.
        public var transition: String
        public var time: Double
    }

    public struct Reading: Sendable, Hashable, Codable {
        public var uuid: UUID
        public var major: UInt16
        public var minor: UInt16
        public var rssi: Double
        public var distance: Double?
        public var proximity: String
        public var time: Double
    }

    /// The most sightings one edge batch may say it consumed: what the compact form's field
    /// holds. One post covers every batch held since the last (`--edge-interval`, 30 s by
    /// default), so a busy gateway's count passes one batch's limit; the bound is what keeps
    /// the server's counter from being pushed by 2^62 at once.
    public static let maximumSightings = Int(UInt32.max)

    public var sequence: Int
    public var settings: Settings
    /// How many sightings the gateway's step consumed (for the server's counters).
    public var sightings: Int
    public var changes: [Change]
    public var readings: [Reading]

    init(sequence: Int, settings: Settings, sightings: Int, changes: [Change], readings: [Reading]) {
        self.sequence = sequence
        self.settings = settings
        self.sightings = sightings
        self.changes = changes
        self.readings = readings
    }

    public init(sequence: Int, settings: GatewaySettings, sightings: Int, outcome: GatewayMonitor.StepOutcome) {
        self.sequence = sequence
        self.settings = Settings(settings)
        self.sightings = sightings
        changes = outcome.changes.map {
            Change(uuid: $0.identity.uuid, major: $0.identity.major, minor: $0.identity.minor,
                   transition: $0.transition == .enter ? "enter" : "exit", time: $0.time)
        }
        readings = outcome.readings.map {
            Reading(uuid: $0.identity.uuid, major: $0.identity.major, minor: $0.identity.minor, rssi: $0.rssi,
                    distance: $0.distance, proximity: $0.proximity, time: $0.time)
        }
    }

    /// A refused field, named as a JSON path (`changes[3].time`).
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var field: String
        public var reason: String
        public var description: String { "\(field): \(reason)" }
    }

    static let proximities: Set<String> = ["immediate", "near", "far", "unknown"]

    /// The server's own step results, after checking what the gateway could have got wrong.
    public func outcome(maximumEntries: Int, times: ClosedRange<Double>) throws(Refusal) -> GatewayMonitor.StepOutcome {
        guard (0...Self.maximumSightings).contains(sightings) else {
            throw Refusal(field: "sightings", reason: "expected 0…\(Self.maximumSightings), found \(sightings)")
        }
        guard changes.count <= maximumEntries else {
            throw Refusal(field: "changes", reason: "expected at most \(maximumEntries), found \(changes.count)")
        }
        guard readings.count <= maximumEntries else {
            throw Refusal(field: "readings", reason: "expected at most \(maximumEntries), found \(readings.count)")
        }
        var outcome = GatewayMonitor.StepOutcome(duplicate: false)
        for (index, change) in changes.enumerated() {
            let transition: GatewayMonitor.Transition
            switch change.transition {
            case "enter": transition = .enter
            case "exit": transition = .exit
            default: throw Refusal(field: "changes[\(index)].transition", reason: "expected enter or exit, found '\(change.transition.prefix(40))'")
            }
            guard times.contains(change.time) else {
                throw Refusal(field: "changes[\(index)].time", reason: "expected a time in \(times.lowerBound)…\(times.upperBound), found \(change.time)")
            }
            outcome.changes.append(GatewayMonitor.Change(identity: BeaconIdentity(uuid: change.uuid, major: change.major, minor: change.minor),
                                                         transition: transition, time: change.time))
        }
        for (index, reading) in readings.enumerated() {
            guard Self.proximities.contains(reading.proximity) else {
                throw Refusal(field: "readings[\(index)].proximity", reason: "expected immediate, near, far or unknown, found '\(reading.proximity.prefix(40))'")
            }
            guard reading.rssi >= Double(SightingBatch.rssiRange.lowerBound), reading.rssi <= Double(SightingBatch.rssiRange.upperBound) else {
                throw Refusal(field: "readings[\(index)].rssi", reason: "expected -127…20 dBm, found \(reading.rssi)")
            }
            if let distance = reading.distance, !(0...10_000).contains(distance) {
                throw Refusal(field: "readings[\(index)].distance", reason: "expected 0…10000 m or null, found \(distance)")
            }
            guard times.contains(reading.time) else {
                throw Refusal(field: "readings[\(index)].time", reason: "expected a time in \(times.lowerBound)…\(times.upperBound), found \(reading.time)")
            }
            outcome.readings.append(GatewayMonitor.Reading(identity: BeaconIdentity(uuid: reading.uuid, major: reading.major, minor: reading.minor),
                                                           rssi: reading.rssi, distance: reading.distance, proximity: reading.proximity, time: reading.time))
        }
        return outcome
    }
}
