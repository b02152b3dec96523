import BeaconKit
import BeaconServer
import Foundation
import NIOCore
import NIOFoundationCompat

/// Sustained ingestion over loopback HTTP: 4 gateways post batches of 500 sightings
/// concurrently to one in-process server, on SQLite and on PostgreSQL.
enum ServerBenchmark {
    static let gateways = 4
    static let batchSize = 500
    static let batchesPerGateway = 200

    static func run() async throws {
        try await BenchServer.eachDatabase(measure)
    }

    static func measure(name: String, location: DatabaseLocation) async throws {
        let bench = try await BenchServer.start(location)
        var tokens: [String] = []
        for index in 0..<gateways {
            tokens.append(try await bench.store.registerGateway(name: "bench-\(index)").1.token)
        }
        let bodies = try (0..<gateways).map { try makeBodies(gateway: $0) }
        let gatewayTokens = tokens

        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for gateway in 0..<gateways {
                group.addTask {
                    for body in bodies[gateway] { try await bench.post(body, token: gatewayTokens[gateway]) }
                }
            }
            try await group.waitForAll()
        }
        let seconds = start.duration(to: clock.now).seconds
        let sightings = gateways * batchesPerGateway * batchSize
        let events = try await bench.store.events(after: 0, limit: 1_000_000).count
        print(String(format: "%@: %d sightings in %.2f s = %.0f sightings/s (%d batches of %d from %d gateways, %d region events)",
                     name, sightings, seconds, Double(sightings) / seconds, gateways * batchesPerGateway, batchSize, gateways, events))
        try await bench.stop()
    }

    /// Pre-encoded batches: each gateway hears 20 beacons, some coming and going.
    static func makeBodies(gateway: Int) throws -> [ByteBuffer] {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let encoder = JSONEncoder()
        // An hour ago: within the server's window for sighting times.
        var time = (Date().timeIntervalSince1970 - 3_600).rounded(.down)
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
