import BeaconGateway
import BeaconKit
import BeaconServer
import BeaconSimulator
import Foundation

/// Upstream bytes per hour of one gateway, central (compact sighting batches) against edge
/// (``EdgeBatch``: the engine's changes and readings), for the same sightings cut into the same
/// batches: an hour of the busiest receiver of the retail and museum examples, batches spanning
/// 0.5 s (the gateway's default `--interval`), 1 s (1 Hz ranging summaries) and 10 s. Bodies
/// only: HTTP headers (about 200 bytes a post) come on top of both, once per batch.
enum EdgeTrafficBenchmark {
    static func run() async throws {
        for file in ["retail.json", "museum.json"] {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("examples/\(file)")
            var scenario = try Scenario.load(contentsOf: url)
            scenario.duration = 3600
            var simulation = Simulation(scenario: scenario)
            let all = simulation.run().map(\.sighting)
            let sightings = Dictionary(grouping: all, by: \.receiver).max { $0.value.count < $1.value.count }!.value
            for span in [0.5, 1.0, 10.0] {
                let batches = cut(sightings, span: span)
                var monitor = GatewayMonitor(settings: GatewaySettings())
                var central = 0, edge = 0, edgeJSON = 0
                for batch in batches {
                    central += try CompactSightingBatch.encode(batch).readableBytes
                    let outcome = monitor.step(batch, now: 0)
                    let summary = EdgeBatch(sequence: batch.sequence ?? 0, settings: GatewaySettings(), sightings: batch.sightings.count, outcome: outcome)
                    let json = try JSONEncoder().encode(summary).count
                    edgeJSON += json
                    edge += CompactEdgeBatch.encode(summary)?.readableBytes ?? json
                }
                let hours = (sightings.last!.time - sightings.first!.time) / 3600
                print(String(format: "%@, %.1f s batches: %d sightings/h in %d posts; compact sightings %.0f kB/h, edge %.0f kB/h (JSON edge %.0f kB/h), %.1f× less (%.1f× counting 200 header bytes a post)",
                             file, span, Int(Double(sightings.count) / hours), batches.count, Double(central) / hours / 1000, Double(edge) / hours / 1000,
                             Double(edgeJSON) / hours / 1000,
                             Double(central) / Double(edge), Double(central + 200 * batches.count) / Double(edge + 200 * batches.count)))
            }
        }
    }

    /// Batches of the sightings heard in each `span` seconds, as the gateway's timer posts them.
    static func cut(_ sightings: [Sighting], span: Double) -> [SightingBatch] {
        var batches: [SightingBatch] = []
        var current: [Sighting] = []
        var end = (sightings.first?.time ?? 0) + span
        for sighting in sightings {
            if sighting.time >= end, !current.isEmpty {
                batches.append(SightingBatch(sequence: batches.count + 1, sightings: current))
                current = []
            }
            while sighting.time >= end { end += span }
            current.append(sighting)
        }
        if !current.isEmpty { batches.append(SightingBatch(sequence: batches.count + 1, sightings: current)) }
        return batches
    }
}
