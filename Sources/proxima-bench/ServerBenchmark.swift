import BeaconGateway
import BeaconKit
import BeaconServer
import Foundation
import NIOCore
import NIOFoundationCompat

/// Sustained ingestion over loopback HTTP: 4 gateways post pre-encoded batches concurrently to
/// one in-process server (each gateway's engine, checkpoint, ranging state, positions and fleet
/// checks as in `proxima serve`), on SQLite and on PostgreSQL, as JSON and as compact binary
/// batches in the same run, each row on a fresh database.
enum ServerBenchmark {
    static let gateways = 4

    struct Row: Sendable {
        var format: GatewayUploader.UploadFormat
        var batchSize: Int
        var sightingsPerGateway: Int
        var batchesPerGateway: Int { sightingsPerGateway / batchSize }
    }

    /// `PROXIMA_BENCH_SERVER_SIGHTINGS` scales the binary rows' sightings per gateway (500,000).
    static var rows: [Row] {
        let binary = ProcessInfo.processInfo.environment["PROXIMA_BENCH_SERVER_SIGHTINGS"].flatMap(Int.init) ?? 500_000
        return [
            Row(format: .json, batchSize: 500, sightingsPerGateway: 100_000),
            Row(format: .binary, batchSize: 500, sightingsPerGateway: binary / 5),
            Row(format: .json, batchSize: 5000, sightingsPerGateway: 100_000),
            Row(format: .binary, batchSize: 5000, sightingsPerGateway: binary),
        ]
    }

    static func run() async throws {
        try await BenchServer.eachDatabase(measure)
    }

    /// `PROXIMA_BENCH_SERVER_ROWS`, e.g. `sqlite binary 5000,postgres json 500`: only these rows,
    /// so one row can be alternated between two builds many times in the time the whole table takes.
    static let onlyRows: Set<String>? = ProcessInfo.processInfo.environment["PROXIMA_BENCH_SERVER_ROWS"].map {
        Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// `PROXIMA_BENCH_SECURITY=compare` puts each gateway in a site of its own with its 20
    /// beacons registered at its place (so the spoof checks have work: docs/security.md, "In the
    /// server"), and measures each row without the checks and with them, three times each in
    /// turn, on fresh databases, and prints the ratio of the median rates.
    static var comparesSecurity: Bool { ProcessInfo.processInfo.environment["PROXIMA_BENCH_SECURITY"] == "compare" }

    static func measure(name: String, location: DatabaseLocation) async throws {
        var jsonRate: [Int: Double] = [:]
        for (index, row) in rows.enumerated() {
            if let onlyRows, !onlyRows.contains("\(name) \(row.format.rawValue) \(row.batchSize)") { continue }
            if comparesSecurity {
                // Alternated, so a neighbour's load on the shared machine falls on both alike.
                var rates: [Bool: [Double]] = [:]
                for round in 0..<3 {
                    for security in [false, true] {
                        let label = name + (security ? " with security checks" : " without security checks")
                        rates[security, default: []].append(try await measure(name: label, location: try BenchServer.fresh(location, suffix: "\(index)-\(round)-\(security)"),
                                                                              row: row, security: security))
                    }
                }
                let median = { (values: [Double]) in values.sorted()[values.count / 2] }
                let without = median(rates[false] ?? [0]), with = median(rates[true] ?? [0])
                print(String(format: "%@ %@ %d/batch: median of 3 without %.0f, with %.0f sightings/s: with/without security checks = %.3f× the rate",
                             name, row.format.rawValue, row.batchSize, without, with, with / without))
                continue
            }
            let rowLocation = try BenchServer.fresh(location, suffix: "\(index)")
            let rate = try await measure(name: name, location: rowLocation, row: row)
            if row.format == .json {
                jsonRate[row.batchSize] = rate
            } else if let json = jsonRate[row.batchSize] {
                print(String(format: "%@: binary/json at %d per batch = %.1f×", name, row.batchSize, rate / json))
            }
        }
    }

    static func measure(name: String, location: DatabaseLocation, row: Row, security: Bool? = nil) async throws -> Double {
        let bench = try await BenchServer.start(location) { configuration in
            if let security { configuration.securityChecks = security }
        }
        var tokens: [String] = []
        do {
            var organisation: UUID?
            if security != nil {
                try await bench.store.setCategory(Category(code: 1, name: "Shelf"))
                organisation = try await bench.store.createOrganisation(name: "bench", proximityUUIDs: [uuid]).id
            }
            for index in 0..<gateways {
                var siteID: Int?
                if let organisation { siteID = try await registerSite(gateway: index, organisation: organisation, store: bench.store) }
                tokens.append(try await bench.store.registerGateway(name: "bench-\(index)", siteID: siteID).1.token)
            }
        } catch {
            // Stopped before the error goes up: a dropped HTTP client traps.
            try await bench.stop()
            throw error
        }
        // Registered beacons need minors of their category's group (1001…): the same traffic, renumbered.
        let bodies = try (0..<gateways).map { try makeBodies(gateway: $0, row: row, minorBase: security == nil ? 0 : 1000) }
        let gatewayTokens = tokens
        let contentType = row.format == .json ? "application/json" : CompactSightingBatch.mediaType
        let bytes = bodies.joined().reduce(0) { $0 + $1.readableBytes }

        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for gateway in 0..<gateways {
                group.addTask {
                    for body in bodies[gateway] { try await bench.post(body, token: gatewayTokens[gateway], contentType: contentType) }
                }
            }
            try await group.waitForAll()
        }
        let seconds = start.duration(to: clock.now).seconds
        let sightings = gateways * row.batchesPerGateway * row.batchSize
        let events = try await bench.store.events(after: 0, limit: 1_000_000).count
        let rate = Double(sightings) / seconds
        print(String(format: "%@ %@ %d/batch: %d sightings in %.2f s = %.0f sightings/s (%d batches from %d gateways, %.0f bytes/sighting, %d events)",
                     name, row.format.rawValue, row.batchSize, sightings, seconds, rate, gateways * row.batchesPerGateway, gateways,
                     Double(bytes) / Double(sightings), events))
        try await bench.stop()
        return rate
    }

    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    /// A site (major `gateway + 1`) with the gateway's 20 beacons deployed at its place and a map
    /// that places the gateway: honest traffic for the coverage check.
    static func registerSite(gateway: Int, organisation: UUID, store: Store) async throws -> Int {
        let site = try await store.createSite(NewSite(organisationID: organisation, uuid: uuid, major: UInt16(gateway + 1),
                                                      name: "bench site \(gateway)", planWidth: 50, planHeight: 50))
        for minor in 1001...1020 {
            _ = try await store.addBeacon(NewBeacon(siteID: site.id, category: 1, label: "shelf \(minor)", position: Position(x: 25, y: 25),
                                                    minor: UInt16(minor), state: .deployed))
        }
        let map = #"{"venue": {"width": 50, "height": 50}, "receivers": [{"name": "bench-\#(gateway)", "position": {"x": 25, "y": 25}}]}"#
        _ = try await store.setSiteMap(siteID: site.id, document: Data(map.utf8))
        return site.id
    }

    /// Pre-encoded batches: each gateway hears 20 beacons, some coming and going.
    static func makeBodies(gateway: Int, row: Row, minorBase: Int = 0) throws -> [ByteBuffer] {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let encoder = JSONEncoder()
        // Within the server's window for sighting times (7 days back, 5 minutes ahead) to the end.
        var time = (Date().timeIntervalSince1970 - 86_400).rounded(.down)
        return try (0..<row.batchesPerGateway).map { batch in
            let sightings = (0..<row.batchSize).map { index -> Sighting in
                time += 0.01
                let minor = UInt16(minorBase + 1 + (index + batch * 7) % 20)
                return Sighting(time: time, receiver: "bench-\(gateway)", address: BluetoothAddress(rawValue: UInt64(minor)),
                                rssi: Int8(-50 - (index % 40)),
                                frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: UInt16(gateway + 1), minor: minor))))
            }
            let batch = SightingBatch(sequence: batch, sightings: sightings)
            return row.format == .json ? ByteBuffer(data: try encoder.encode(batch)) : try CompactSightingBatch.encode(batch)
        }
    }
}
