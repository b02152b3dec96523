import ArgumentParser
import BeaconKit
import Foundation

struct Range: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Range beacons: once a second, the beacons of each region with proximity and accuracy.",
        discussion: """
            Each cycle lists, per region, the beacons heard within the tracking age, nearest first \
            and unknown last, with Core Location's fields. On a terminal the table refreshes every \
            second; otherwise one line per beacon per cycle, or one JSON object per region and cycle \
            with --json.
            """)

    @OptionGroup var source: SourceOptions
    @OptionGroup var engine: EngineOptions
    @OptionGroup var mqtt: MQTTOptions

    func run() async throws {
        let regions = try engine.allRegions(simulatedRegions: try source.loadScenario()?.monitoringRegions ?? [])
        let table = Terminal.isInteractive && !engine.json
        var latest: [String: [RangedBeacon]] = [:]
        let publisher = try await mqtt.start(receiver: engine.receiver, pathLossExponent: engine.exponent)
        // With MQTT the regions are monitored too, for its enter/exit and region state topics.
        try await engine.run(source, monitoring: publisher == nil ? [] : regions, ranging: regions, mqtt: publisher) { event in
            guard case .didRange(let beacons, let region, let time) = event else { return }
            if engine.json {
                try StandardOutput.jsonLine(event)
            } else if table {
                latest[region.identifier] = beacons
                if region.identifier == regions.last?.identifier {
                    try StandardOutput.write(Self.render(regions: regions, latest: latest, time: time))
                }
            } else {
                for beacon in beacons { try StandardOutput.line("\(Terminal.timestamp(time))  \(region.identifier)  " + Self.row(beacon)) }
            }
        }
    }

    static func render(regions: [BeaconRegion], latest: [String: [RangedBeacon]], time: Double) -> String {
        var text = Terminal.clear + "proxima range    \(Terminal.timestamp(time))\n"
        for region in regions {
            text += "\n\(region)\n"
            text += "  " + Terminal.pad("UUID", 38) + Terminal.pad("MAJOR", 7) + Terminal.pad("MINOR", 7)
                + Terminal.pad("PROXIMITY", 11) + Terminal.pad("ACCURACY", 10) + Terminal.pad("RSSI", 6)
                + Terminal.pad("POWER", 7) + "PACKETS\n"
            for beacon in latest[region.identifier] ?? [] { text += "  " + row(beacon) + "\n" }
        }
        return text
    }

    static func row(_ beacon: RangedBeacon) -> String {
        let accuracy = beacon.accuracy < 0 ? "-1" : String(format: "%.2f m", beacon.accuracy)
        return Terminal.pad(beacon.identity.uuid.uuidString, 38) + Terminal.pad("\(beacon.identity.major)", 7)
            + Terminal.pad("\(beacon.identity.minor)", 7) + Terminal.pad(beacon.proximity.description, 11)
            + Terminal.pad(accuracy, 10) + Terminal.pad("\(beacon.rssi)", 6)
            + Terminal.pad("\(beacon.measuredPower.dBm)", 7) + "\(beacon.packetCount)"
    }
}
