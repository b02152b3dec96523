import ArgumentParser
import BeaconKit
import Foundation

struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Monitor regions: report entering and leaving them, on any source.",
        discussion: """
            Regions come from `proxima regions` (restored on every start) and --region. On a terminal \
            a table of region states refreshes every second; otherwise one line per event, or JSON \
            lines with --json. The exit rule is explained in docs/monitoring-and-ranging.md.
            """)

    @OptionGroup var source: SourceOptions
    @OptionGroup var engine: EngineOptions
    @OptionGroup var mqtt: MQTTOptions

    @Flag(help: "Also store the --region regions for later runs.")
    var save = false

    func run() async throws {
        let regions = try engine.allRegions(simulatedRegions: try source.loadScenario()?.monitoringRegions ?? [])
        if save {
            let store = RegionStore()
            for text in engine.regions { try store.add(try engine.region(text)) }
        }
        // Ranging the same regions gives the once-a-second heartbeat that refreshes the table.
        let table = Terminal.isInteractive && !engine.json
        var view = MonitorTable(regions: regions)
        let publisher = try await mqtt.start(receiver: engine.receiver, pathLossExponent: engine.exponent)
        // MQTT's beacon topics come from ranging, so it ranges the regions too.
        let ranged = table || publisher != nil ? regions : []
        try await engine.run(source, monitoring: regions, ranging: ranged, mqtt: publisher) { event in
            if engine.json {
                if case .didRange = event { return }
                try StandardOutput.jsonLine(event)
            } else if table {
                view.apply(event)
                if case .didRange = event, event.region.identifier == regions.last?.identifier { try StandardOutput.write(view.render()) }
            } else {
                if let line = MonitorTable.line(for: event) { try StandardOutput.line(line) }
            }
        }
    }
}

/// The monitor's terminal view: one row per region.
struct MonitorTable {
    struct Row {
        var region: BeaconRegion
        var state: RegionState = .outside
        var since: Double?
        var beaconsHeard = 0
    }
    var rows: [Row]
    var recent: [String] = []
    var now: Double = 0

    init(regions: [BeaconRegion]) { rows = regions.map { Row(region: $0) } }

    mutating func apply(_ event: BeaconEvent) {
        now = max(now, event.time)
        guard let index = rows.firstIndex(where: { $0.region.identifier == event.region.identifier }) else { return }
        switch event {
        case .didEnter: rows[index].state = .inside; rows[index].since = event.time
        case .didExit: rows[index].state = .outside; rows[index].since = event.time
        case .didDetermineState(let state, _, _): rows[index].state = state
        case .didRange(let beacons, _, _): rows[index].beaconsHeard = beacons.filter { $0.packetCount > 0 }.count
        }
        if let line = Self.line(for: event) {
            recent.append(line)
            if recent.count > 10 { recent.removeFirst() }
        }
    }

    func render() -> String {
        var text = Terminal.clear + "proxima monitor    \(Terminal.timestamp(now))\n\n"
        text += Terminal.pad("REGION", 20) + Terminal.pad("CONSTRAINT", 50) + Terminal.pad("STATE", 9) + Terminal.pad("SINCE", 14) + "HEARD\n"
        for row in rows {
            text += Terminal.pad(row.region.identifier, 20) + Terminal.pad(row.region.constraintText, 50)
                + Terminal.pad(row.state.rawValue, 9) + Terminal.pad(row.since.map(Terminal.timestamp) ?? "-", 14)
                + "\(row.beaconsHeard)\n"
        }
        text += "\nrecent events:\n" + recent.map { "  " + $0 + "\n" }.joined()
        return text
    }

    static func line(for event: BeaconEvent) -> String? {
        switch event {
        case .didEnter(let region, let time): "\(Terminal.timestamp(time))  enter  \(region)"
        case .didExit(let region, let time): "\(Terminal.timestamp(time))  exit   \(region)"
        case .didDetermineState(let state, let region, let time): "\(Terminal.timestamp(time))  state  \(region): \(state.rawValue)"
        case .didRange: nil
        }
    }
}
