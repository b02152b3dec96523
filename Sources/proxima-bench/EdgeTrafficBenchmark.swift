import BeaconGateway
import BeaconKit
import BeaconServer
import BeaconSimulator
import Foundation

/// Upstream bytes per hour of one gateway, central (compact sighting batches) against edge
/// (``EdgeBatch``: the engine's changes and readings), for the same sightings: an hour of the
/// busiest receiver of the retail and museum examples, cut at the gateway's flush ticks
/// (`--interval`, 0.5 s by default). Edge mode posts at every tick that had an enter or exit and
/// otherwise holds the readings for `--edge-interval` (``EdgeSummaryHold``); the row "every tick"
/// is the first edge version, which posted each tick's results. Each post is counted with the
/// HTTP request head `proxima gateway` sends.
enum EdgeTrafficBenchmark {
    /// The head of a post as captured from `proxima gateway` (AsyncHTTPClient, 27 Nov 2026) with
    /// a 46-character token: request line, Content-Type, Authorization, host, Content-Length,
    /// Accept-Encoding. TCP/IP and TLS framing are left out on both sides.
    static func requestHeadBytes(contentType: String, bodyLength: Int, host: String = "proxima.example.org:8080") -> Int {
        let token = "px_" + String(repeating: "A", count: 43)
        let head = "POST /v1/sightings HTTP/1.1\r\nContent-Type: \(contentType)\r\nAuthorization: Bearer \(token)\r\n"
            + "host: \(host)\r\nContent-Length: \(bodyLength)\r\nAccept-Encoding: deflate, gzip\r\n\r\n"
        return head.utf8.count
    }

    struct Traffic {
        var posts = 0
        var bodies = 0
        var heads = 0
        var total: Int { bodies + heads }

        mutating func post(bodyLength: Int, contentType: String) {
            posts += 1
            bodies += bodyLength
            heads += requestHeadBytes(contentType: contentType, bodyLength: bodyLength)
        }
    }

    static func run() async throws {
        for file in ["retail.json", "museum.json"] {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("examples/\(file)")
            var scenario = try Scenario.load(contentsOf: url)
            scenario.duration = 3600
            var simulation = Simulation(scenario: scenario)
            let all = simulation.run().map(\.sighting)
            let sightings = Dictionary(grouping: all, by: \.receiver).max { $0.value.count < $1.value.count }!.value
            let hours = (sightings.last!.time - sightings.first!.time) / 3600
            let ticks = cut(sightings, span: 0.5)
            let central = try centralTraffic(ticks)
            let central10 = try centralTraffic(cut(sightings, span: 10))
            print(String(format: "%@: %d sightings/h of the busiest receiver; central at 0.5 s ticks %d posts/h, %.0f kB/h bodies, %.0f kB/h with heads; central at 10 s ticks %.0f kB/h with heads",
                         file, Int(Double(sightings.count) / hours), Int(Double(central.posts) / hours), Double(central.bodies) / hours / 1000,
                         Double(central.total) / hours / 1000, Double(central10.total) / hours / 1000))
            for interval in [nil, 10.0, 30.0, 60.0] {
                let (edge, changes) = edgeTraffic(ticks, readingInterval: interval)
                print(String(format: "  edge %@: %d posts/h (%d with enters or exits), %.1f kB/h bodies, %.1f kB/h with heads: %.1f× less than central at 0.5 s, %.1f× less than central at 10 s (bodies alone %.1f×)",
                             interval.map { String(format: "readings every %.0f s", $0) } ?? "every tick", Int(Double(edge.posts) / hours),
                             Int(Double(changes) / hours), Double(edge.bodies) / hours / 1000, Double(edge.total) / hours / 1000,
                             Double(central.total) / Double(edge.total), Double(central10.total) / Double(edge.total),
                             Double(central.bodies) / Double(edge.bodies)))
            }
        }
    }

    static func centralTraffic(_ batches: [SightingBatch]) throws -> Traffic {
        var traffic = Traffic()
        for batch in batches {
            traffic.post(bodyLength: try CompactSightingBatch.encode(batch).readableBytes, contentType: CompactSightingBatch.mediaType)
        }
        return traffic
    }

    /// Edge posts as `proxima gateway --edge` makes them; nil interval: every tick's results.
    /// Answers the traffic and how many posts carried an enter or exit.
    static func edgeTraffic(_ ticks: [SightingBatch], readingInterval: Double?) -> (Traffic, Int) {
        var monitor = GatewayMonitor(settings: GatewaySettings())
        var hold = EdgeSummaryHold(settings: GatewaySettings(), readingInterval: readingInterval ?? 0)
        var traffic = Traffic()
        var withChanges = 0
        func post(_ batch: EdgeBatch) {
            if !batch.changes.isEmpty { withChanges += 1 }
            let length = CompactEdgeBatch.encode(batch)?.readableBytes ?? 0
            traffic.post(bodyLength: length, contentType: CompactEdgeBatch.mediaType)
        }
        for tick in ticks {
            let now = tick.sightings.last?.time ?? 0
            hold.add(monitor.step(tick, now: 0), sightings: tick.sightings.count, now: now)
            if hold.isDue(at: now) { post(hold.take(sequence: tick.sequence ?? 0)) }
        }
        if hold.isHolding { post(hold.take(sequence: ticks.count + 1)) }
        return (traffic, withChanges)
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
