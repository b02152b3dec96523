@testable import BeaconGateway
import BeaconKit
@testable import BeaconServer
import Foundation
import SQLKit
import Synchronization
import Testing

/// The pipeline's after-commit contract: an observer that fails after the batch committed loses
/// nothing (its outbox mark stays and is retried) and doubles nothing (what it stores commits
/// with the clearing of its mark, once).
@Suite("Batch observers")
struct PipelineObserverTests {
    /// Writes a marker row for each batch it sees, then fails its first `failures` runs, after
    /// writing: a failure must roll its write back.
    final class FlakyObserver: BatchObserver {
        let name = "flaky"
        let phase = ObserverPhase.afterCommit
        let failures: Int
        let runs = Mutex(0)

        init(failures: Int) {
            self.failures = failures
        }

        func wants(_ batch: ObservedBatch) -> Bool { true }

        func observe(_ batch: ObservedBatch, context: ObserverContext, db: any SQLDatabase) async throws -> [StoredEvent] {
            try await db.raw("""
                INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at)
                VALUES (\(bind: batch.gatewayID), 'enter', \(bind: UUID().uuidString), 0, 0, NULL, 'flaky observer', \(bind: batch.serverTime),
                        \(bind: batch.serverTime))
                """).run()
            let run = runs.withLock { runs in
                runs += 1
                return runs
            }
            if run <= failures { throw RegistryError(.invalid, field: "flaky", "failing run \(run) on purpose") }
            return []
        }
    }

    static func markers(_ store: Store) async throws -> Int {
        try await store.database.read { db in
            try await db.raw("SELECT COUNT(*) AS n FROM region_events WHERE label = 'flaky observer'").first()?.int("n") ?? 0
        }
    }

    static func outboxRows(_ store: Store) async throws -> Int {
        try await store.database.read { db in try await BatchOutbox.count(db: db) }
    }

    @Test func aFailingAfterCommitObserverIsRetriedAndStoresExactlyOnce() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            let flaky = FlakyObserver(failures: 2)
            let ingestion = IngestService(store: store, instance: "t", settings: GatewaySettings(), window: .default,
                                          positions: PositionTracking(), fleet: FleetTracking(clock: { 100 }), security: nil,
                                          rotation: nil, registry: RegistrySnapshots(store: store), publisher: nil, metrics: nil,
                                          extraObservers: [flaky], clock: { 100 })
            let sighting = Sighting(time: 99, receiver: "door", address: BluetoothAddress(rawValue: 1), rssi: -60,
                                    frame: .iBeacon(IBeaconFrame(identity: office.mordor.identity)))
            let result = try await ingestion.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 1, sightings: [sighting]))
            // The batch itself committed: its enter is stored and acknowledged.
            #expect(result.events.map(\.kindName) == ["enter"])
            #expect(try await Self.markers(store) == 0, "the failed run's write was not rolled back")
            #expect(try await Self.outboxRows(store) == 1, "the failed observer's work was not kept")

            // The same batch again is a duplicate: no second outbox row, no second run.
            let again = try await ingestion.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 1, sightings: [sighting]))
            #expect(again.duplicate)
            #expect(flaky.runs.withLock { $0 } == 1)

            try await ingestion.retryPendingObservers(before: 101)
            #expect(try await Self.markers(store) == 0)
            #expect(try await Self.outboxRows(store) == 1)
            try await ingestion.retryPendingObservers(before: 101)
            #expect(try await Self.markers(store) == 1)
            #expect(try await Self.outboxRows(store) == 0, "the row outlived its last mark")
            // Nothing is left to run: more retries store nothing more.
            try await ingestion.retryPendingObservers(before: 101)
            #expect(try await Self.markers(store) == 1)
            #expect(flaky.runs.withLock { $0 } == 3)
            // The fleet observer, which did not fail, ran once: its mark was cleared at commit.
            #expect(ingestion.fleet?.report().contains { $0.identity == office.mordor.identity } == true)
        }
    }

    @Test func anOutboxRowIsOnlyWrittenWhenAnAfterCommitObserverWantsTheBatch() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            let ingestion = IngestService(store: store, instance: "t", clock: { 100 })
            let sighting = Sighting(time: 99, receiver: "door", address: BluetoothAddress(rawValue: 1), rssi: -60,
                                    frame: .iBeacon(IBeaconFrame(identity: office.mordor.identity)))
            _ = try await ingestion.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 1, sightings: [sighting]))
            #expect(try await Self.outboxRows(store) == 0)
            #expect(!ingestion.observers.contains { $0.phase == .afterCommit && $0.name != "replays" })
        }
    }

    @Test func theOutboxKeepsTheSightingsExactly() throws {
        let sightings: [Sighting] = (0..<50).map { (index: Int) -> Sighting in
            let identity = BeaconIdentity(uuid: Fixture.nerderyUUID, major: 1, minor: UInt16(index))
            let rssi: Int8? = index % 7 == 0 ? nil : Int8(-40 - index)
            let time: Double = 1_000 + Double(index) * 0.25
            return Sighting(time: time, receiver: index % 2 == 0 ? "door" : "hall", address: BluetoothAddress(rawValue: UInt64(index)),
                            rssi: rssi, frame: .iBeacon(IBeaconFrame(identity: identity)))
        }
        let text = try BatchOutbox.encode(sightings)
        #expect(text.hasPrefix("c:"))
        #expect(try BatchOutbox.decode(text) == sightings)
        #expect(throws: RegistryError.self) { try BatchOutbox.decode("x:nothing") }
    }
}
