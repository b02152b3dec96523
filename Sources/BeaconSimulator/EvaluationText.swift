import BeaconKit
import Foundation

extension EvaluationReport {
    /// The report as plain-text tables, as `proxima evaluate` prints it.
    public var text: String {
        var lines: [String] = []
        let hours = duration / 3600
        lines.append("Scenario: \(scenarioName)")
        lines.append("Simulated \(format(duration, 0)) s (\(format(hours, 2)) h), \(receivers) receivers, \(identities) beacon identities, \(regions) regions: \(format(beaconHours, 1)) beacon-hours (receivers × identities × hours)")
        let s = statistics
        lines.append("Air: \(s.advertisingEvents) advertising events; at listening receivers \(s.received) received, \(s.belowSensitivity) below sensitivity, \(s.collided) collided (\(format(100 * s.collisionRate, 2)) % of receivable)")
        lines.append("Truth: \(truthEnters) region enters, \(truthExits) region exits")
        lines.append("")
        lines.append("Monitoring (latency = engine − truth, s; negative = early; false events per beacon-hour and per 10^4 beacon-hours)")
        lines.append(row(["configuration", "enter p50", "p95", "max", "exit p50", "p95", "max", "false enters/bh", "false exits/bh", "false exits/10^4 bh", "missed in/out"],
                         widths: monitoringWidths))
        for variant in variants {
            guard let m = variant.monitoring else { continue }
            lines.append(row([variant.name, format(m.enterLatency.p50, 1), format(m.enterLatency.p95, 1), format(m.enterLatency.max, 1),
                              format(m.exitLatency.p50, 1), format(m.exitLatency.p95, 1), format(m.exitLatency.max, 1),
                              format(m.falseEntersPerBeaconHour, 3), format(m.falseExitsPerBeaconHour, 3),
                              format(m.falseExitsPerBeaconHour * 10_000, 0), "\(m.missedEnters)/\(m.missedExits)"],
                             widths: monitoringWidths))
        }
        let monitored = variants.filter { $0.monitoring != nil }
        if let names = receiverNames, !monitored.isEmpty {
            lines.append("")
            lines.append("False enters + exits by receiver:")
            let labels = monitored.map { $0.name.hasPrefix("default") ? "default" : $0.name.components(separatedBy: ": ").last ?? $0.name }
            let nameWidth = max(20, (names.map(\.count).max() ?? 0) + 2)
            let widths = [nameWidth] + labels.map { max(9, $0.count + 2) }
            lines.append(row(["receiver"] + labels, widths: widths))
            for (index, name) in names.enumerated() {
                lines.append(row([name] + monitored.map { "\($0.monitoring?.falseEventsByReceiver[index] ?? 0)" }, widths: widths))
            }
        }
        lines.append("")
        lines.append("Ranging: |accuracy − true distance| in m, median / p90 by band of true distance (n = estimates)")
        let bands = DistanceBand.allCases
        lines.append(row(["configuration"] + bands.map(\.description) + ["all", "unknown", "zone agreement"], widths: rangingWidths))
        for variant in variants {
            guard let r = variant.ranging else { continue }
            let cells = bands.map { band -> String in
                guard let d = r.errorByBand[band] else { return "-" }
                return "\(format(d.p50, 2))/\(format(d.p90, 2)) n=\(d.count)"
            }
            lines.append(row([variant.name] + cells + ["\(format(r.overall.p50, 2))/\(format(r.overall.p90, 2))", "\(r.unknownEstimates)",
                                                       "\(format(100 * r.proximityAgreement, 1)) %"], widths: rangingWidths))
        }
        for variant in variants.prefix(1) {
            guard let r = variant.ranging else { continue }
            lines.append("")
            lines.append("Proximity confusion (\(variant.name)); rows true zone, columns reported:")
            lines.append(row(["true \\ reported", "unknown", "immediate", "near", "far"], widths: [18, 10, 10, 10, 10]))
            for (index, name) in ["immediate <0.5 m", "near 0.5–3 m", "far ≥3 m"].enumerated() {
                lines.append(row([name] + r.confusion[index].map(String.init), widths: [18, 10, 10, 10, 10]))
            }
        }
        lines += switchedOffText
        return lines.joined(separator: "\n")
    }

    private var monitoringWidths: [Int] { [50, 9, 7, 7, 9, 7, 7, 15, 14, 19, 13] }
    private var rangingWidths: [Int] { [50, 20, 20, 20, 20, 20, 11, 8, 14] }

    private func row(_ cells: [String], widths: [Int]) -> String {
        zip(cells, widths).enumerated().map { index, pair in
            let (cell, width) = pair
            let padding = String(repeating: " ", count: max(0, width - cell.count))
            return index == 0 ? cell + padding : padding + cell
        }.joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }
}

func format(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "-" }
    return String(format: "%.\(decimals)f", value)
}
