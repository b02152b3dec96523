import BeaconKit
import BeaconServer
import Foundation

/// Issue 12: what the fleet checks add to the server's ingestion at 10,000 beacons × 20
/// gateways. The same batches go through `ProximaServer.accept` (the path of
/// `POST /v1/sightings` after decoding: each gateway's engine, checkpoint rows, ranging state,
/// one SQLite transaction per batch) with the fleet checks off and on, alternately, on copies
/// of one registry. With the checks on, every batch is observed and the checks run once per
/// second of the gateways' clock from ingestion, storing their alert events.
enum FleetServerBenchmark {
    static let beaconCount = 10_000
    static let gatewayCount = 20
    static let sites = 10
    /// Seconds of the gateways' clock; each gateway posts every 0.5 s.
    static let seconds = 20
    static let rounds = 2
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    struct Batch {
        var gateway: Int
        var sightings: [Sighting]
    }

    /// Site s has beacons 1,000·s … 1,000·s + 999 and gateways 2s and 2s + 1; each of its gateways
    /// hears each of its beacons once per batch (so nothing is out of place): 1,000 sightings per
    /// batch, 40 batches and 40,000 sightings per second.
    static func batches(identities: [BeaconIdentity], start: Double) -> [Batch] {
        var generator = SplitMix64(seed: 12)
        var result: [Batch] = []
        for half in 0..<(seconds * 2) {
            for gateway in 0..<gatewayCount {
                let base = start + Double(half) * 0.5 + Double(gateway) * 0.001
                var sightings: [Sighting] = []
                sightings.reserveCapacity(2 * beaconCount / gatewayCount)
                for (index, identity) in identities.enumerated() {
                    guard index * sites / identities.count == gateway * sites / gatewayCount else { continue }
                    let rssi = Int8(-60 - Int(generator.next() % 30))
                    sightings.append(Sighting(time: base + Double(index % 400) * 0.001, receiver: "gw-\(gateway)",
                                              address: BluetoothAddress(rawValue: UInt64(index + 1)), rssi: rssi,
                                              frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59)))))
                }
                result.append(Batch(gateway: gateway, sightings: sightings))
            }
        }
        return result
    }

    static func run() async throws {
        let directory = NSTemporaryDirectory() + "proxima-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let template = directory + "/registry.sqlite"

        let clock = ContinuousClock()
        var began = clock.now
        let setup = try await BenchServer.start(.sqliteFile(path: template))
        let organisation = try await setup.store.createOrganisation(name: "Bench", proximityUUIDs: [uuid])
        var identities: [BeaconIdentity] = []
        for site in 0..<sites {
            let created = try await setup.store.createSite(NewSite(organisationID: organisation.id, name: "Site \(site)", planWidth: 100, planHeight: 100))
            let plan = (0..<(beaconCount / sites)).map { index in
                PlannedPosition(category: 1 + index / 999, label: "B\(index)", x: Double(index % 100), y: Double(index / 100))
            }
            for configuration in try await setup.store.configure(siteID: created.id, plan: plan) {
                _ = try await setup.store.setBeaconState(id: configuration.beaconID, state: .deployed, installedOn: "2026-01-01")
                identities.append(BeaconIdentity(uuid: configuration.uuid, major: configuration.major, minor: configuration.minor))
            }
            for gateway in 0..<gatewayCount where gateway * sites / gatewayCount == site {
                _ = try await setup.store.registerGateway(name: "gw-\(gateway)", siteID: created.id)
            }
        }
        let gatewayIDs = Dictionary(uniqueKeysWithValues: try await setup.store.gateways().map { ($0.name, $0.id) })
        try await setup.stop()
        let start = (Date().timeIntervalSince1970 - 3_600).rounded(.down)
        let work = batches(identities: identities, start: start)
        let sightings = work.reduce(0) { $0 + $1.sightings.count }
        print(String(format: "registry of %d deployed beacons, %d gateways in %.1f s; %d batches, %d sightings (%d s of gateway time; real time needs %d batches/s)",
                     identities.count, gatewayIDs.count, began.duration(to: clock.now).seconds, work.count, sightings, seconds, gatewayCount * 2))

        var rates: [Bool: [Double]] = [:]
        for round in 1...rounds {
            for checks in [false, true] {
                let path = directory + "/run-\(round)-\(checks).sqlite"
                try FileManager.default.copyItem(atPath: template, toPath: path)
                let bench = try await BenchServer.start(.sqliteFile(path: path)) { configuration in
                    configuration.fleetChecks = checks
                    // Links are learnt within the run (not after 10 minutes), so the checks judge them.
                    configuration.fleet.learningSeconds = 5
                    configuration.fleet.learningPackets = 5
                }
                began = clock.now
                var alertEvents = 0
                for (sequence, batch) in work.enumerated() {
                    let result = try await bench.server.accept(SightingBatch(sequence: sequence, sightings: batch.sightings),
                                                               gatewayID: gatewayIDs["gw-\(batch.gateway)"]!)
                    alertEvents += result.events.filter { $0.fleet != nil }.count
                }
                let elapsed = began.duration(to: clock.now).seconds
                let counts = bench.server.ingestion.fleet?.stateCounts() ?? [:]
                let expected = bench.server.ingestion.fleet?.report().filter { $0.heardBy.contains { $0.expected } }.count ?? 0
                rates[checks, default: []].append(Double(work.count) / elapsed)
                print(String(format: "round %d, fleet checks %@: %.1f batches/s, %.0f sightings/s (%.1f s)%@",
                             round, checks ? "on " : "off", Double(work.count) / elapsed, Double(sightings) / elapsed, elapsed,
                             checks ? ", \(alertEvents) alert events, states \(counts.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")), \(expected) beacons with expected links" : ""))
                try await bench.stop()
            }
        }
        let off = rates[false, default: []].reduce(0, +) / Double(rounds)
        let on = rates[true, default: []].reduce(0, +) / Double(rounds)
        print(String(format: "mean: off %.1f batches/s, on %.1f batches/s: the checks cost %.1f %% of ingestion throughput", off, on, (1 - on / off) * 100))
    }
}
