import BeaconKit
import BeaconRotation
import BeaconSecurity
import Foundation

/// Runs the security detector on a scenario's attacked sighting stream and scores its alerts
/// against the attacks' truth (docs/security.md, "Measured on simulated attacks").
///
/// The rules, fixed before any run:
/// - An attack is detected by the first alert that names what it forged, at or after its first
///   forged sighting reached the server: a copied identity (spoofer, fast clone, replay) or, for
///   a clock, the receiver (clockSkew; replay through a receiver). Latency runs from that first
///   forged sighting to the alert, on the server's clock.
/// - Any other alert is a false alarm, except one naming an attack's subject up to
///   `aftermath` seconds after the attack ends (a baseline that learned the attack moves back).
/// - Honest receiver-hours are each receiver's hours in the scenario, less the time a clock
///   attack or a replay through it made it dishonest.
public struct SecurityEvaluation: Sendable {
    public let scenario: Scenario
    public let settings: SecuritySettings
    public static let aftermath = 600.0

    public init(scenario: Scenario, settings: SecuritySettings = SecuritySettings()) {
        self.scenario = scenario
        self.settings = settings
    }

    /// What the detector knows: the registered beacons (attack transmitters are not registered)
    /// and the fixed receivers' positions.
    public var site: SecuritySite {
        var beacons: [BeaconIdentity: SecuritySite.Beacon] = [:]
        for beacon in scenario.registeredBeacons where beacons[beacon.identity] == nil {
            beacons[beacon.identity] = SecuritySite.Beacon(
                name: beacon.name, position: beacon.path == nil ? beacon.position : nil,
                measuredPower: beacon.measuredPower, address: beacon.address)
        }
        var receivers: [String: Position3D] = [:]
        for receiver in scenario.receivers {
            if case .fixed(let point) = receiver.placement { receivers[receiver.name] = point }
        }
        var rotations: [BeaconIdentity: RotatingIdentity] = [:]
        for beacon in scenario.registeredBeacons {
            if let rotation = beacon.rotation { rotations[beacon.identity] = rotation }
        }
        return SecuritySite(beacons: beacons, receivers: receivers, rotations: rotations, settings: settings)
    }

    public func run() -> SecurityReport {
        var detector = SecurityDetector(site: site)
        var stream = AttackedSimulation(scenario: scenario)
        var alerts: [SecurityAlert] = []
        var firstForged = [Double?](repeating: nil, count: scenario.attacks.count)
        var forgedCounts = [Int](repeating: 0, count: scenario.attacks.count)
        var sightings = 0
        while let item = stream.next() {
            sightings += 1
            if let attack = item.attack {
                forgedCounts[attack] += 1
                // Batches from receivers at different phases arrive out of the order heard in.
                firstForged[attack] = min(firstForged[attack] ?? .infinity, item.serverTime)
            }
            guard let observation = SecurityObservation(item.sighting, serverTime: item.serverTime) else { continue }
            detector.receive(observation, into: &alerts)
        }
        return score(alerts: alerts, firstForged: firstForged, forgedCounts: forgedCounts, sightings: sightings)
    }

    func score(alerts: [SecurityAlert], firstForged: [Double?], forgedCounts: [Int], sightings: Int) -> SecurityReport {
        var results: [SecurityReport.AttackResult] = []
        var explained = Set<Int>()
        // An attack that would start after the run (a shortened scenario) did not happen.
        for (index, attack) in scenario.attacks.enumerated() where attack.start < scenario.duration {
            let start = firstForged[index] ?? attack.start
            let end = attack.end(duration: scenario.duration) + Self.aftermath
            let matching = alerts.indices.filter { explains(alerts[$0], attack: attack) && alerts[$0].time <= end && alerts[$0].time >= attack.start }
            explained.formUnion(matching)
            let first = matching.first { alerts[$0].time >= start }.map { alerts[$0] }
            results.append(SecurityReport.AttackResult(
                scenario: scenario.name, attack: attack.name, kind: attack.kindName, start: start, forgedSightings: forgedCounts[index],
                detected: first != nil, detectedBy: first?.kind.rawValue, latency: first.map { $0.time - start }, reason: first?.reason))
        }
        let falseAlarms = alerts.indices.filter { !explained.contains($0) }.map { index in
            SecurityReport.FalseAlarm(scenario: scenario.name, kind: alerts[index].kind.rawValue, receivers: alerts[index].receivers,
                                      time: alerts[index].time, reason: alerts[index].reason)
        }
        var dishonestSeconds = 0.0
        for attack in scenario.attacks {
            switch attack.kind {
            case .clockSkew(_, let at, _, _): dishonestSeconds += max(0, scenario.duration - at)
            case .replay(_, _, _, _, let at, _, _): dishonestSeconds += max(0, attack.end(duration: scenario.duration) - at)
            case .spoofer, .fastClone: break
            }
        }
        let receiverHours = max(0, Double(scenario.receivers.count) * scenario.duration - dishonestSeconds) / 3600
        return SecurityReport(attacks: results, falseAlarms: falseAlarms, honestReceiverHours: receiverHours, sightings: sightings,
                              alerts: alerts.count)
    }

    private func explains(_ alert: SecurityAlert, attack: ScenarioAttack) -> Bool {
        func names(_ receiver: Int) -> Bool { alert.identity == nil && alert.receivers.contains(scenario.receivers[receiver].name) }
        func copies(_ beacons: [Int]) -> Bool { alert.identity.map { identity in beacons.contains { scenario.beacons[$0].identity == identity } } ?? false }
        switch attack.kind {
        case .spoofer(let originals, _, _, _): return copies(originals)
        case .fastClone(let original, _, _): return copies([original])
        case .clockSkew(let receiver, _, _, _): return names(receiver)
        case .replay(let beacons, _, _, _, _, let via, _): return copies(beacons) || names(via)
        }
    }
}

/// Detection per attack and false alarms, for one scenario or several combined.
public struct SecurityReport: Sendable, Hashable, Codable {
    public struct AttackResult: Sendable, Hashable, Codable {
        public var scenario: String
        public var attack: String
        public var kind: String
        /// Earliest server time of the attack's forged sightings (its start if none arrived).
        public var start: Double
        public var forgedSightings: Int
        public var detected: Bool
        public var detectedBy: String?
        public var latency: Double?
        public var reason: String?
    }

    public struct FalseAlarm: Sendable, Hashable, Codable {
        public var scenario: String
        public var kind: String
        public var receivers: [String]
        public var time: Double
        public var reason: String
    }

    public var attacks: [AttackResult]
    public var falseAlarms: [FalseAlarm]
    public var honestReceiverHours: Double
    public var sightings: Int
    public var alerts: Int

    public static func combined(_ reports: [SecurityReport]) -> SecurityReport {
        SecurityReport(attacks: reports.flatMap(\.attacks), falseAlarms: reports.flatMap(\.falseAlarms),
                       honestReceiverHours: reports.map(\.honestReceiverHours).reduce(0, +), sightings: reports.map(\.sightings).reduce(0, +),
                       alerts: reports.map(\.alerts).reduce(0, +))
    }

    /// Share of attacks detected (by attack, not by packet).
    public var detectionRate: Double {
        attacks.isEmpty ? 1 : Double(attacks.filter(\.detected).count) / Double(attacks.count)
    }

    /// False alarms per honest receiver-hour: each receiver a false alarm names counts once.
    public var falseAlarmsPerReceiverHour: Double {
        let named = falseAlarms.map { max(1, $0.receivers.count) }.reduce(0, +)
        return honestReceiverHours > 0 ? Double(named) / honestReceiverHours : 0
    }

    /// The 95th percentile of detection latency over detected attacks (nearest rank), seconds.
    public var latencyP95: Double? {
        let latencies = attacks.compactMap(\.latency).sorted()
        guard !latencies.isEmpty else { return nil }
        let rank = Int((0.95 * Double(latencies.count)).rounded(.up))
        return latencies[max(0, min(latencies.count - 1, rank - 1))]
    }

    public var text: String {
        var lines = ["| scenario | attack | kind | forged sightings | detected by | latency (s) |", "|---|---|---|---:|---|---:|"]
        for row in attacks {
            lines.append("| \(row.scenario) | \(row.attack) | \(row.kind) | \(row.forgedSightings) | \(row.detectedBy ?? "**missed**") | \(row.latency.map { String(format: "%.1f", $0) } ?? "–") |")
        }
        lines.append("")
        let detected = attacks.filter(\.detected).count
        lines.append(String(format: "Detected: %d of %d attacks (%.1f %%)", detected, attacks.count, detectionRate * 100))
        lines.append(String(format: "False alarms: %d in %.1f honest receiver-hours (%.2f %% of receiver-hours)",
                            falseAlarms.count, honestReceiverHours, falseAlarmsPerReceiverHour * 100))
        lines.append("Detection latency p95: \(latencyP95.map { String(format: "%.1f s", $0) } ?? "–")")
        lines.append("Sightings checked: \(sightings); alerts raised: \(alerts)")
        if !falseAlarms.isEmpty {
            lines.append("")
            lines.append("False alarms:")
            for alarm in falseAlarms.prefix(20) {
                lines.append("  \(alarm.scenario) at \(String(format: "%.1f", alarm.time)) s: \(alarm.kind) (\(alarm.reason))")
            }
        }
        return lines.joined(separator: "\n")
    }
}
