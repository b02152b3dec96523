import BeaconGateway
import BeaconKit
import BeaconServer
import Foundation
import NIOCore
import NIOFoundationCompat

/// Issue 9, item 1: one gateway posts 100,000 distinct identities in batches of 500 over
/// loopback HTTP. Every batch's time is taken; the goal is a last batch within 3× the first.
/// Runs on each database of ``BenchServer/eachDatabase(_:)``.
enum FloodBenchmark {
    static let identities = 100_000
    static let batchSize = 500

    static func measure(name: String, location: DatabaseLocation) async throws {
        let bench = try await BenchServer.start(location)
        let token = try await bench.store.registerGateway(name: "flood").1.token
        let bodies = try makeBodies()
        let clock = ContinuousClock()
        var times: [Double] = []
        for body in bodies {
            let start = clock.now
            try await bench.post(body, token: token)
            times.append(start.duration(to: clock.now).seconds)
        }
        let (rows, headerBytes) = try await bench.store.database.read { db in
            (try await db.raw("SELECT COUNT(*) AS n FROM gateway_beacons").first()?.decode(column: "n", as: Int.self) ?? 0,
             try await db.raw("SELECT state FROM gateway_checkpoints").first()?.decode(column: "state", as: String.self).utf8.count ?? 0)
        }
        func milliseconds(_ slice: ArraySlice<Double>) -> Double { slice.reduce(0, +) / Double(slice.count) * 1000 }
        let first = times[0] * 1000, last = times[times.count - 1] * 1000
        let firstTen = milliseconds(times.prefix(10)), lastTen = milliseconds(times.suffix(10))
        let sorted = times.sorted()
        print(String(format: "%@: %d identities in %d batches of %d: first %.1f ms, last %.1f ms (last/first %.2f); "
                     + "first 10 %.1f ms, last 10 %.1f ms (%.2f); median %.1f ms, slowest %.1f ms; total %.1f s",
                     name, identities, times.count, batchSize, first, last, last / first, firstTen, lastTen, lastTen / firstTen,
                     sorted[sorted.count / 2] * 1000, sorted[sorted.count - 1] * 1000, times.reduce(0, +)))
        print("\(name): checkpoint after the flood: \(rows) beacon rows (limit \(GatewaySettings.defaultBeaconLimit)), header \(headerBytes) bytes")
        try await bench.stop()
    }

    /// Each sighting a new identity: a rogue sending random minors under random UUIDs, two
    /// packets each so every identity enters, at 100 identities per second.
    static func makeBodies() throws -> [ByteBuffer] {
        let encoder = JSONEncoder()
        let start = (Date().timeIntervalSince1970 - Double(identities) / 100 - 60).rounded(.down)
        var generator = SplitMix64(seed: 9)
        return try stride(from: 0, to: identities, by: batchSize).enumerated().map { batch, first in
            var sightings: [Sighting] = []
            for n in first..<(first + batchSize) {
                let random = generator.next()
                let uuid = UUID(uuid: (UInt8(truncatingIfNeeded: random), UInt8(truncatingIfNeeded: random >> 8), UInt8(truncatingIfNeeded: random >> 16),
                                       UInt8(truncatingIfNeeded: random >> 24), 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))
                let identity = BeaconIdentity(uuid: uuid, major: UInt16(truncatingIfNeeded: random >> 32), minor: UInt16(truncatingIfNeeded: n))
                for packet in 0..<2 {
                    sightings.append(Sighting(time: start + Double(n) / 100 + Double(packet) * 0.005, receiver: "flood",
                                              address: BluetoothAddress(rawValue: UInt64(n)), rssi: Int8(-60 - Int(random % 30)),
                                              frame: .iBeacon(IBeaconFrame(identity: identity))))
                }
            }
            return ByteBuffer(data: try encoder.encode(SightingBatch(sequence: batch, sightings: sightings)))
        }
    }
}
