import BeaconKit
import BeaconRotation
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import SQLKit
import Synchronization
import Testing

/// One registry snapshot per generation: a write that lands while a snapshot loads is never
/// lost (the flags it replaced were cleared after the load's `await`, forgetting such a write
/// until a timed refresh), and writes that change no registry table never reload it.
@Suite("Registry snapshots")
struct RegistrySnapshotTests {
    static let lateMinor: UInt16 = 4_242

    /// A deployed beacon written straight into the table, on the loading connection.
    static func insertBeacon(siteID: Int, minor: UInt16, db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO beacons (site_id, uuid, major, minor, x, y, measured_power, tx_power, battery, installed_on, state)
            VALUES (\(bind: siteID), \(bind: Fixture.nerderyUUID.uuidString), \(bind: 1), \(bind: Int(minor)), \(bind: 3.0), \(bind: 4.0),
                    \(bind: -59), \(bind: 0), \(bind: "CR2477"), \(bind: nil as String?), \(bind: "deployed"))
            """).run()
    }

    /// Snapshots whose first load sees a write commit after it read the tables.
    static func snapshotsRacedByOneWrite(store: Store, write: @escaping @Sendable (any SQLDatabase) async throws -> Void) -> RegistrySnapshots {
        let raced = Mutex(false)
        return RegistrySnapshots(store: store, afterTablesRead: { db in
            guard raced.withLock({ done in defer { done = true }; return !done }) else { return }
            try await write(db)
        })
    }

    static func identity(major: UInt16, minor: UInt16) -> BeaconIdentity {
        BeaconIdentity(uuid: Fixture.nerderyUUID, major: major, minor: minor)
    }

    @Test func aBeaconAddedDuringALoadReachesTheFleetChecksAtTheNextBatch() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let snapshots = Self.snapshotsRacedByOneWrite(store: store) { db in
                try await Self.insertBeacon(siteID: office.site.id, minor: Self.lateMinor, db: db)
            }
            let late = Self.identity(major: office.site.major, minor: Self.lateMinor)
            let fleet = FleetTracking(clock: { 0 })
            let first = try await snapshots.current()
            fleet.apply(first)
            #expect(!first.fleet.beacons.contains { $0.identity == late }, "the write came after the tables were read")
            let second = try await snapshots.current()
            #expect(second.generation > first.generation)
            fleet.apply(second)
            #expect(second.fleet.beacons.contains { $0.identity == late })
            #expect(fleet.report().contains { $0.identity == late }, "the fleet checks lost the beacon added during the load")
            #expect(fleet.appliedGeneration == second.generation)
            // Nothing changed since: no third load.
            _ = try await snapshots.current()
            #expect(snapshots.loads == 2)
        }
    }

    @Test func aBeaconAddedDuringALoadReachesTheSecurityChecksAtTheNextBatch() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let snapshots = Self.snapshotsRacedByOneWrite(store: store) { db in
                try await Self.insertBeacon(siteID: office.site.id, minor: Self.lateMinor, db: db)
            }
            let late = Self.identity(major: office.site.major, minor: Self.lateMinor)
            let security = SecurityTracking(clock: { 0 })
            try security.apply(try await snapshots.current())
            #expect(!security.knows(late))
            try security.apply(try await snapshots.current())
            #expect(security.knows(late), "the security checks lost the beacon added during the load")
        }
    }

    @Test func aRotationKeySetDuringALoadIsResolvedAtTheNextBatch() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let secret = try ServerSecret(bytes: [UInt8](repeating: 7, count: 32))
            let key = try RotationKey(bytes: [UInt8](repeating: 9, count: 16), field: "key")
            let beaconID = office.mordor.id
            let sealed = try secret.seal(key.bytes, context: Store.rotationContext(beaconID: beaconID)).base64EncodedString()
            let snapshots = Self.snapshotsRacedByOneWrite(store: store) { db in
                try await db.raw("""
                    INSERT INTO beacon_rotations (beacon_id, sealed_key, key_fingerprint, period_seconds, created_at, updated_at)
                    VALUES (\(bind: beaconID), \(bind: sealed), \(bind: "test"), \(bind: 86_400), \(bind: 0.0), \(bind: 0.0))
                    """).run()
            }
            let resolver = RotationResolver(secret: secret, registry: snapshots)
            let now = 1_800_000_000.0
            let rotating = RotatingIdentity(uuid: office.mordor.identity.uuid, key: key, period: .day)
            let heard = rotating.identity(at: now)
            #expect(try await resolver.match(heard, at: now, now: now) == nil, "the key was written after the load read the table")
            let match = try await resolver.match(heard, at: now, now: now)
            #expect(match?.registered == office.mordor.identity, "the resolver lost the key set during the load")
        }
    }

    @Test func uploadsAndApplicationPostsDoNotReloadTheRegistryButARegistryWriteDoes() async throws {
        var configuration = ServerConfiguration()
        configuration.batchesPerSecond = 1_000_000
        configuration.batchBurst = 1_000_000
        try await RouterHarness.with(configuration: configuration) { harness, client in
            let server = harness.server
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway),
                                     body: try harness.batchBody([harness.sighting(RouterHarness.now - 1)], sequence: 1)) { response in
                #expect(response.status == .accepted, "\(response.text)")
            }
            let afterFirstBatch = server.ingestion.registry.loads
            #expect(afterFirstBatch == 1)
            let upload = ByteBuffer(bytes: AprilBrotherIngestTests.messagePack([AprilBrotherIngestTests.defaultUUIDFrame]))
            for _ in 0..<1_000 {
                try await client.execute(uri: "/v1/gateways/april-brother", method: .post,
                                         headers: harness.headers(.gateway, contentType: "application/msgpack"), body: upload) { response in
                    #expect(response.status == .accepted, "\(response.text)")
                }
            }
            for sequence in 2..<12 {
                try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway),
                                         body: try harness.batchBody([harness.sighting(RouterHarness.now - 1)], sequence: sequence)) { _ in }
            }
            // A write outside the registry's tables (a token) moves nothing either.
            _ = try await server.store.issueToken(name: "another reader", role: .readOnly)
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway),
                                     body: try harness.batchBody([harness.sighting(RouterHarness.now - 1)], sequence: 12)) { _ in }
            #expect(server.ingestion.registry.loads == afterFirstBatch, "uploads reloaded the registry")
            #expect(await Self.metric("proxima_registry_loads_total", client: client, harness: harness) == Double(afterFirstBatch))

            let added = try await server.store.addBeacon(NewBeacon(siteID: harness.office.site.id, category: 2, label: "Late",
                                                                   position: Position(x: 1, y: 1), installedOn: nil, state: .deployed))
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway),
                                     body: try harness.batchBody([harness.sighting(RouterHarness.now - 1, identity: added.identity)], sequence: 13)) { _ in }
            #expect(server.ingestion.registry.loads == afterFirstBatch + 1)
            let fleet = try #require(server.ingestion.fleet)
            #expect(fleet.report().contains { $0.identity == added.identity })
        }
    }

    static func metric(_ name: String, client: any TestClientProtocol, harness: RouterHarness) async -> Double? {
        let text = try? await client.execute(uri: "/metrics", method: .get, headers: harness.headers(.readOnly)) { $0.text }
        let line = text?.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }
    }
}
