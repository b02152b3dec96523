import BeaconFleet
import Foundation

/// `GET /v1/fleet`: the fleet table and the unknown identities heard.
public struct FleetSummary: Sendable, Codable {
    public var siteID: Int?
    /// The gateways' clock the table was made at; nil before the first batch.
    public var time: Double?
    public var beacons: [BeaconHealth]
    public var unregistered: [UnregisteredIdentity]

    public init(siteID: Int?, time: Double? = nil, beacons: [BeaconHealth], unregistered: [UnregisteredIdentity]) {
        self.siteID = siteID
        self.time = time
        self.beacons = beacons
        self.unregistered = unregistered
    }
}

/// An identity under an organisation's UUID that the registry does not know.
public struct UnregisteredIdentity: Sendable, Codable {
    public var subject: String
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var firstHeard: Double
    public var lastHeard: Double
    public var packets: Int
    /// Gateway name → strongest RSSI it heard, so someone can walk to the device.
    public var strongestByGateway: [String: Int]
}

/// `GET /v1/fleet/alerts`.
public struct FleetAlertList: Sendable, Codable {
    public var alerts: [FleetAlert]
}

/// The fleet table as `proxima fleet` prints it: one line per beacon, worst state first, with
/// when and by whom it was last heard, its battery and its reasons; then unknown identities.
public enum FleetTable {
    public static func lines(_ summary: FleetSummary, alerts: [FleetAlert] = []) -> [String] {
        let now = summary.time
        var lines = ["state    last heard   heard by                 battery        beacon"]
        let rows = summary.beacons.sorted { ($0.state, $1.label) > ($1.state, $0.label) }
        for row in rows {
            let heard = row.lastHeard.map { last in now.map { ago($0 - last) } ?? String(format: "%.0f", last) } ?? "never"
            let by = row.heardBy.first.map { "\($0.gateway) \(String(format: "%.1f/s", $0.packetsPerSecond))" + (row.heardBy.count > 1 ? " +\(row.heardBy.count - 1)" : "") } ?? "–"
            var battery = row.batteryMillivolts.map { "\($0) mV" } ?? "–"
            if let days = row.batteryDaysLeft { battery += String(format: " %.0f d", days) }
            lines.append(pad(row.state.rawValue, 9) + pad(heard, 13) + pad(by, 25) + pad(battery, 15) + row.label
                         + " (\(row.uuid.uuidString):\(row.major):\(row.minor))")
            for finding in row.findings {
                lines.append("         \(finding.check.rawValue) (\(finding.level.rawValue)): \(finding.reason)")
            }
        }
        if !summary.unregistered.isEmpty {
            lines.append("")
            lines.append("unregistered identities")
            for entry in summary.unregistered {
                let strongest = entry.strongestByGateway.max { $0.value < $1.value }.map { " strongest at \($0.key) (\($0.value) dBm)" } ?? ""
                lines.append("  \(entry.subject): \(entry.packets) packets\(strongest)")
            }
        }
        if !alerts.isEmpty {
            lines.append("")
            lines.append("open alerts")
            for alert in alerts {
                lines.append("  #\(alert.id) \(alert.level.rawValue) \(alert.check.rawValue) \(alert.label)\(alert.acknowledged ? " (acknowledged by \(alert.acknowledgedBy ?? "?"))" : ""): \(alert.reason)")
            }
        }
        return lines
    }

    static func ago(_ seconds: Double) -> String {
        let seconds = max(0, seconds)
        if seconds < 120 { return String(format: "%.0f s ago", seconds) }
        if seconds < 7200 { return String(format: "%.0f min ago", seconds / 60) }
        return String(format: "%.1f h ago", seconds / 3600)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
