import BeaconFleet
import BeaconKit
import Foundation

/// Scores what a fleet monitor said (its alert changes, and samples of its table) against the
/// faults a scenario injected. Pure: the same inputs give the same score, whoever ran the
/// monitor (a `FleetMonitor` in a test, or `proxima serve` fed by `proxima gateway`).
///
/// The rules, fixed before any run:
/// - A fault is detected by the first alert change raising one of its expected checks on its
///   subject at or after the fault's time: `battery` (before the death, with TLM) and `missing`
///   (after it) for a battery death, `drift` or `outOfPlace` for a move, `unregistered` for a
///   rogue, `clone` for a clone. A receiver outage is "detected" when no beacon is called missing
///   during it (and up to the largest silence threshold after it) unless that beacon had died.
/// - Dead-beacon latency runs from the death to the `missing` alert; it is compared with twice the
///   silence threshold the monitor showed for the beacon (`missingAfter`) at its last sample
///   before the death.
/// - Days left is compared with the truth (`death − time`) at every sample from three days to
///   half a day before the death; the worst relative error is reported.
/// - A false `missing` is one raised on a beacon that was transmitting at the time.
/// - Any other raise that no fault explains (wrong subject, wrong check, or before the fault) is
///   listed as unexplained. A clone also explains `drift` and `outOfPlace` on its identity: the
///   second transmitter shifts what the gateways hear of it.
public struct FaultScore: Sendable, Hashable, Codable {
    /// One alert change as a feed reports it: who, which check, from and to which level, when.
    public struct AlertChange: Sendable, Hashable, Codable {
        public var identity: BeaconIdentity?
        public var gateway: String?
        public var check: FleetCheck
        public var from: HealthLevel
        public var to: HealthLevel
        public var time: Double

        public init(identity: BeaconIdentity?, gateway: String? = nil, check: FleetCheck, from: HealthLevel, to: HealthLevel, time: Double) {
            self.identity = identity
            self.gateway = gateway
            self.check = check
            self.from = from
            self.to = to
            self.time = time
        }

        var isRaise: Bool { to >= .warning && to > from }
    }

    /// One beacon's row of the fleet table at a time on the monitor's clock.
    public struct Sample: Sendable, Hashable, Codable {
        public var time: Double
        public var identity: BeaconIdentity
        public var state: HealthLevel
        public var daysLeft: Double?
        public var missingAfter: Double?

        public init(time: Double, identity: BeaconIdentity, state: HealthLevel, daysLeft: Double?, missingAfter: Double?) {
            self.time = time
            self.identity = identity
            self.state = state
            self.daysLeft = daysLeft
            self.missingAfter = missingAfter
        }
    }

    public struct Row: Sendable, Hashable, Codable {
        public var fault: String
        public var subject: String
        public var injectedAt: Double
        public var expected: [FleetCheck]
        public var detected: Bool
        public var detectedBy: FleetCheck?
        /// From the fault (or the death, for a dead beacon's `missing`) to the alert, seconds.
        public var latency: Double?
        /// A dead beacon's latency divided by twice its silence threshold (≤ 1 passes).
        public var latencyRatio: Double?
        /// Worst relative error of days left in the window before a battery's death.
        public var daysLeftError: Double?
        public var note: String
    }

    public struct FalseAlarm: Sendable, Hashable, Codable {
        public var subject: String
        public var check: FleetCheck
        public var level: HealthLevel
        public var time: Double
    }

    public var rows: [Row]
    public var falseMissing: [FalseAlarm]
    public var unexplained: [FalseAlarm]
    /// 95th percentile (nearest rank) of dead beacons' detection latency, and of its ratio to
    /// twice the silence threshold.
    public var deadLatencyP95: Double?
    public var deadLatencyRatioP95: Double?
    public var worstDaysLeftError: Double?

    /// The relative days-left error allowed (issue 12: within 20 %).
    public static let daysLeftTolerance = 0.2
    static let daysLeftWindow = (from: 3 * 86_400.0, to: 0.5 * 86_400.0)

    /// Whether every must-show holds: each fault detected by its check, dead beacons found
    /// within twice their threshold (p95), no false missing, days left within 20 %.
    public var passes: Bool {
        rows.allSatisfy(\.detected) && falseMissing.isEmpty && (deadLatencyRatioP95 ?? 0) <= 1
            && (worstDaysLeftError ?? 0) <= Self.daysLeftTolerance
    }

    public init(scenario: Scenario, changes: [AlertChange], samples: [Sample], end: Double? = nil) {
        let end = end ?? scenario.duration
        let raises = changes.filter(\.isRaise).sorted { $0.time < $1.time }
        var deaths: [BeaconIdentity: Double] = [:]
        for fault in scenario.faults {
            if case .batteryDeath(let beacon, let discharge) = fault.kind { deaths[scenario.beacons[beacon].identity] = discharge.death }
        }
        var explained: [(identity: BeaconIdentity?, gateway: String?, checks: Set<FleetCheck>, from: Double)] = []
        var rows: [Row] = []
        var deadLatencies: [Double] = []
        var deadRatios: [Double] = []
        var daysErrors: [Double] = []
        let maxThreshold = samples.compactMap(\.missingAfter).max() ?? 0

        func first(_ checks: Set<FleetCheck>, on identity: BeaconIdentity, from time: Double, before limit: Double = .infinity) -> AlertChange? {
            raises.first { $0.identity == identity && checks.contains($0.check) && $0.time >= time && $0.time < limit }
        }

        for fault in scenario.faults {
            switch fault.kind {
            case .batteryDeath(let index, let discharge):
                let beacon = scenario.beacons[index]
                let identity = beacon.identity
                var expected: [FleetCheck] = [.missing]
                var notes: [String] = []
                var detectedBy: FleetCheck?
                var detected = true
                if beacon.telemetry {
                    expected.insert(.battery, at: 0)
                    explained.append((identity, nil, [.battery], discharge.start))
                    if let warned = first([.battery], on: identity, from: discharge.start, before: discharge.death) {
                        detectedBy = .battery
                        notes.append("battery \(warned.to.rawValue) \(Self.days(discharge.death - warned.time)) before death")
                    } else {
                        detected = false
                        notes.append("no battery alert before death")
                    }
                }
                explained.append((identity, nil, [.missing], discharge.death))
                var latency: Double?
                var ratio: Double?
                if discharge.death < end {
                    if let missing = first([.missing], on: identity, from: discharge.death) {
                        detectedBy = detectedBy ?? .missing
                        latency = missing.time - discharge.death
                        deadLatencies.append(missing.time - discharge.death)
                        let threshold = samples.last { $0.identity == identity && $0.time < discharge.death && $0.missingAfter != nil }?.missingAfter
                        if let threshold {
                            ratio = (missing.time - discharge.death) / (2 * threshold)
                            deadRatios.append(ratio!)
                            notes.append("missing after \(Self.seconds(missing.time - discharge.death)), threshold \(Self.seconds(threshold))")
                        }
                    } else {
                        detected = false
                        notes.append("no missing alert after death")
                    }
                }
                var worst: Double?
                if beacon.telemetry {
                    let window = samples.filter {
                        $0.identity == identity && $0.time >= discharge.death - Self.daysLeftWindow.from && $0.time < discharge.death - Self.daysLeftWindow.to
                    }
                    for sample in window {
                        let truth = (discharge.death - sample.time) / 86_400
                        let error = sample.daysLeft.map { abs($0 - truth) / truth } ?? .infinity
                        worst = max(worst ?? 0, error)
                    }
                    if let worst {
                        daysErrors.append(worst)
                        notes.append("days left within \(Self.percent(worst)) over \(window.count) samples")
                    }
                }
                rows.append(Row(fault: fault.kindName, subject: beacon.name, injectedAt: discharge.start, expected: expected,
                                detected: detected, detectedBy: detectedBy, latency: latency, latencyRatio: ratio, daysLeftError: worst,
                                note: notes.joined(separator: "; ")))
            case .move(let index, let at, _):
                let beacon = scenario.beacons[index]
                explained.append((beacon.identity, nil, [.drift, .outOfPlace], at))
                let hit = first([.drift, .outOfPlace], on: beacon.identity, from: at)
                rows.append(Row(fault: fault.kindName, subject: beacon.name, injectedAt: at, expected: [.drift, .outOfPlace],
                                detected: hit != nil, detectedBy: hit?.check, latency: hit.map { $0.time - at }, note: hit.map { "\($0.check.rawValue) \($0.to.rawValue)" } ?? "not found"))
            case .rogue(let index, let at):
                let beacon = scenario.beacons[index]
                explained.append((beacon.identity, nil, [.unregistered], at))
                let hit = first([.unregistered], on: beacon.identity, from: at)
                rows.append(Row(fault: fault.kindName, subject: beacon.identity.description, injectedAt: at, expected: [.unregistered],
                                detected: hit != nil, detectedBy: hit?.check, latency: hit.map { $0.time - at }, note: hit == nil ? "not found" : ""))
            case .clone(let original, _, let at):
                let beacon = scenario.beacons[original]
                // A second transmitter elsewhere also shifts the identity's RSSI at the gateways.
                explained.append((beacon.identity, nil, [.clone, .drift, .outOfPlace], at))
                let hit = first([.clone], on: beacon.identity, from: at)
                rows.append(Row(fault: fault.kindName, subject: beacon.name, injectedAt: at, expected: [.clone],
                                detected: hit != nil, detectedBy: hit?.check, latency: hit.map { $0.time - at }, note: hit == nil ? "not found" : ""))
            case .receiverOffline(let receiver, let from, let to):
                let limit = to + maxThreshold
                let falseDuring = raises.filter { change in
                    guard change.check == .missing, change.time >= from, change.time < limit, let identity = change.identity else { return false }
                    return deaths[identity].map { change.time < $0 } ?? true
                }
                let unknown = Set(samples.filter { $0.time >= from && $0.time < to && $0.state == .unknown }.map(\.identity))
                rows.append(Row(fault: fault.kindName, subject: scenario.receivers[receiver].name, injectedAt: from, expected: [],
                                detected: falseDuring.isEmpty, detectedBy: nil, latency: nil,
                                note: "\(falseDuring.count) false missing during it; \(unknown.count) beacons shown unknown"))
            }
        }

        let names = Dictionary(scenario.beacons.map { ($0.identity, $0.name) }, uniquingKeysWith: { first, _ in first })
        var falseMissing: [FalseAlarm] = []
        var unexplained: [FalseAlarm] = []
        for raise in raises {
            let subject = raise.identity.map { names[$0] ?? $0.description } ?? raise.gateway.map { "gateway \($0)" } ?? "?"
            let alarm = FalseAlarm(subject: subject, check: raise.check, level: raise.to, time: raise.time)
            if raise.check == .missing, let identity = raise.identity, deaths[identity].map({ raise.time < $0 }) ?? true {
                falseMissing.append(alarm)
                continue
            }
            let isExplained = explained.contains { entry in
                entry.checks.contains(raise.check) && raise.time >= entry.from
                    && (entry.identity != nil ? entry.identity == raise.identity : entry.gateway == raise.gateway)
            }
            if !isExplained { unexplained.append(alarm) }
        }
        self.rows = rows
        self.falseMissing = falseMissing
        self.unexplained = unexplained
        deadLatencyP95 = Self.percentile95(deadLatencies)
        deadLatencyRatioP95 = Self.percentile95(deadRatios)
        worstDaysLeftError = daysErrors.max()
    }

    /// Nearest-rank 95th percentile.
    static func percentile95(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[max(0, Int((0.95 * Double(sorted.count)).rounded(.up)) - 1)]
    }

    static func seconds(_ value: Double) -> String {
        value < 120 ? "\(Int(value.rounded())) s" : value < 7200 ? "\(Int((value / 60).rounded())) min" : String(format: "%.1f h", value / 3600)
    }

    static func days(_ value: Double) -> String { String(format: "%.1f days", value / 86_400) }
    static func percent(_ value: Double) -> String { value.isFinite ? "\(Int((value * 100).rounded())) %" : "∞ (no estimate)" }

    /// The table for docs/fleet.md: faults injected, detected, latency, false alarms.
    public var markdown: String {
        var lines = ["| fault | subject | injected (day) | expected check | detected by | latency | notes |", "|---|---|---|---|---|---|---|"]
        for row in rows {
            let latency = row.latency.map(Self.seconds) ?? "–"
            let ratio = row.latencyRatio.map { String(format: " (%.2f × 2T)", $0) } ?? ""
            lines.append("| \(row.fault) | \(row.subject) | \(String(format: "%.2f", row.injectedAt / 86_400)) | "
                + "\(row.expected.isEmpty ? "no false missing" : row.expected.map(\.rawValue).joined(separator: ", ")) | "
                + "\(row.detected ? (row.detectedBy?.rawValue ?? "yes") : "**no**") | \(latency)\(ratio) | \(row.note) |")
        }
        lines.append("")
        lines.append("False missing alerts: \(falseMissing.count)\(falseMissing.isEmpty ? "" : " (" + falseMissing.map { "\($0.subject) at day \(String(format: "%.2f", $0.time / 86_400))" }.joined(separator: ", ") + ")"). "
            + "Other alerts no fault explains: \(unexplained.count)\(unexplained.isEmpty ? "" : " (" + unexplained.prefix(10).map { "\($0.check.rawValue) \($0.level.rawValue) on \($0.subject) at day \(String(format: "%.2f", $0.time / 86_400))" }.joined(separator: ", ") + ")").")
        lines.append("Dead beacons: p95 latency \(deadLatencyP95.map(Self.seconds) ?? "–"), p95 of latency / (2 × threshold) "
            + "\(deadLatencyRatioP95.map { String(format: "%.2f", $0) } ?? "–") (≤ 1 passes). Worst days-left error from 3 to 0.5 days before death: "
            + "\(worstDaysLeftError.map(Self.percent) ?? "–") (≤ 20 % passes). Overall: \(passes ? "pass" : "FAIL").")
        return lines.joined(separator: "\n")
    }
}
