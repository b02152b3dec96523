import AsyncHTTPClient
import BeaconKit
import BeaconServer
import BeaconTesting
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat

/// Sustained ingestion over loopback HTTP: 4 gateways post batches of 500 sightings
/// concurrently to one in-process server, on SQLite and on PostgreSQL.
enum ServerBenchmark {
    static let gateways = 4
    static let batchSize = 500
    static let batchesPerGateway = 200

    static func run() async throws {
        let directory = NSTemporaryDirectory() + "proxima-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await measure(name: "sqlite", location: .sqliteFile(path: directory + "/bench.sqlite"))
        if PostgresServer.binaryDirectory != nil {
            let url = try PostgresServer.shared().createDatabase(prefix: "bench")
            try await measure(name: "postgres", location: try DatabaseLocation(parsing: url))
        } else {
            print("postgres: skipped (PostgreSQL is not installed)")
        }
    }

    static func measure(name: String, location: DatabaseLocation) async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let database = try await ProximaDatabase.open(location, logger: logger)
        let store = Store(database: database)
        var configuration = ServerConfiguration(instanceName: "bench")
        configuration.batchesPerSecond = 1_000_000
        configuration.batchBurst = 1_000_000
        let server = ProximaServer(store: store, configuration: configuration, logger: logger)
        var tokens: [String] = []
        for index in 0..<gateways {
            tokens.append(try await store.registerGateway(name: "bench-\(index)").1.token)
        }
        let bodies = try (0..<gateways).map { try makeBodies(gateway: $0) }
        let gatewayTokens = tokens

        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = server.makeApplication(host: "127.0.0.1", port: 0) { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
        }
        let serving = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { return }
        let base = "http://127.0.0.1:\(port)/v1/sightings"

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for gateway in 0..<gateways {
                group.addTask {
                    for body in bodies[gateway] {
                        var request = HTTPClientRequest(url: base)
                        request.method = .POST
                        request.headers.add(name: "Authorization", value: "Bearer \(gatewayTokens[gateway])")
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(body)
                        let response = try await client.execute(request, timeout: .seconds(60))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        guard response.status == .accepted else {
                            throw BenchmarkFailure(description: "batch refused with \(response.status)")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let sightings = gateways * batchesPerGateway * batchSize
        let events = try await store.events(after: 0, limit: 1_000_000).count
        print(String(format: "%@: %d sightings in %.2f s = %.0f sightings/s (%d batches of %d from %d gateways, %d region events)",
                     name, sightings, seconds, Double(sightings) / seconds, gateways * batchesPerGateway, batchSize, gateways, events))
        try await client.shutdown()
        serving.cancel()
        _ = try? await serving.value
        portContinuation.finish()
        await server.shutdown()
        await database.close()
    }

    struct BenchmarkFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Pre-encoded batches: each gateway hears 20 beacons, some coming and going.
    static func makeBodies(gateway: Int) throws -> [ByteBuffer] {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let encoder = JSONEncoder()
        var time = 0.0
        return try (0..<batchesPerGateway).map { batch in
            let sightings = (0..<batchSize).map { index -> Sighting in
                time += 0.01
                let minor = UInt16(1 + (index + batch * 7) % 20)
                return Sighting(time: time, receiver: "bench-\(gateway)", address: BluetoothAddress(rawValue: UInt64(minor)),
                                rssi: Int8(-50 - (index % 40)),
                                frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: UInt16(gateway + 1), minor: minor))))
            }
            return ByteBuffer(data: try encoder.encode(SightingBatch(sequence: batch, sightings: sightings)))
        }
    }
}
