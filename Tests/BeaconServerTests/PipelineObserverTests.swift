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

    /// Counts its runs and never has anything to store.
    final class IdleObserver: BatchObserver {
        let name = "idle"
        let phase = ObserverPhase.afterCommit
        let runs = Mutex(0)
        func wants(_ batch: ObservedBatch) -> Bool { true }
        func prepare(_ batch: ObservedBatch, context: ObserverContext) async throws -> ObserverStore? {
            runs.withLock { $0 += 1 }
            return nil
        }
    }

    @Test func aFinishedRowGoesWithTheNextBatchAndIsNeverRetried() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            let idle = IdleObserver()
            let ingestion = IngestService(store: store, instance: "t", settings: GatewaySettings(), window: .default,
                                          positions: PositionTracking(), fleet: nil, security: nil, rotation: nil,
                                          registry: RegistrySnapshots(store: store), publisher: nil, metrics: nil,
                                          extraObservers: [idle], clock: { 100 })
            func batch(_ sequence: Int) -> SightingBatch {
                SightingBatch(sequence: sequence, sightings: [Sighting(time: 98 + Double(sequence) / 10, receiver: "door", address: BluetoothAddress(rawValue: 1),
                                                                      rssi: -60, frame: .iBeacon(IBeaconFrame(identity: office.mordor.identity)))])
            }
            _ = try await ingestion.ingest(gatewayID: gateway.id, batch: batch(1))
            #expect(try await Self.outboxRows(store) == 1, "a finished row is deleted by the next write, not one of its own")
            // The retry does not run it again, and deletes it.
            try await ingestion.retryPendingObservers(before: 101)
            #expect(idle.runs.withLock { $0 } == 1)
            #expect(try await Self.outboxRows(store) == 0)

            // Finished rows wait until there are enough for one statement to delete them.
            let perDelete = FinishedOutboxRows.rowsPerDelete
            for sequence in 2...(perDelete + 1) { _ = try await ingestion.ingest(gatewayID: gateway.id, batch: batch(sequence)) }
            #expect(try await Self.outboxRows(store) == perDelete)
            // The next batch's transaction deletes them all; its own row waits.
            _ = try await ingestion.ingest(gatewayID: gateway.id, batch: batch(perDelete + 2))
            #expect(try await Self.outboxRows(store) == 1)
            try await ingestion.deleteFinishedRows()
            #expect(try await Self.outboxRows(store) == 0)
            #expect(idle.runs.withLock { $0 } == perDelete + 2)
        }
    }

    /// The batch's transaction reads the registry generation with the gateway's header: a
    /// registry write (here straight into the table, as another instance's would be) makes the
    /// next batch roll back before it is stepped and run once more on a new snapshot. It is
    /// accepted once, its observers run once, and they see the new beacon.
    @Test func aBatchAfterARegistryWriteRunsOnceOnTheNewSnapshot() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            let idle = IdleObserver()
            let snapshots = RegistrySnapshots(store: store)
            let ingestion = IngestService(store: store, instance: "t", settings: GatewaySettings(), window: .default,
                                          positions: PositionTracking(), fleet: FleetTracking(clock: { 100 }), security: nil, rotation: nil,
                                          registry: snapshots, publisher: nil, metrics: nil, extraObservers: [idle], clock: { 100 })
            func batch(_ sequence: Int, _ identity: BeaconIdentity) -> SightingBatch {
                SightingBatch(sequence: sequence, sightings: [Sighting(time: 98 + Double(sequence) / 10, receiver: "door",
                                                                      address: BluetoothAddress(rawValue: UInt64(identity.minor)), rssi: -60,
                                                                      frame: .iBeacon(IBeaconFrame(identity: identity)))])
            }
            _ = try await ingestion.ingest(gatewayID: gateway.id, batch: batch(1, office.mordor.identity))
            #expect(snapshots.loads == 1)
            try await store.database.transaction { db in
                try await RegistrySnapshotTests.insertBeacon(siteID: office.site.id, minor: RegistrySnapshotTests.lateMinor, db: db)
            }
            let late = RegistrySnapshotTests.identity(major: office.site.major, minor: RegistrySnapshotTests.lateMinor)
            let second = try await ingestion.ingest(gatewayID: gateway.id, batch: batch(2, late))
            #expect(!second.duplicate && second.accepted == 1)
            #expect(second.events.map(\.kindName) == ["enter"])
            #expect(snapshots.loads == 2, "the batch did not load the registry its transaction found newer")
            #expect(idle.runs.withLock { $0 } == 2, "an observer ran for the attempt that rolled back")
            #expect(ingestion.fleet?.report().contains { $0.identity == late } == true, "the fleet checks ran on the old snapshot")
            // Nothing moved since: the next batch reads no registry.
            _ = try await ingestion.ingest(gatewayID: gateway.id, batch: batch(3, late))
            #expect(snapshots.loads == 2)
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

    static let fifty: [Sighting] = (0..<50).map { (index: Int) -> Sighting in
        let identity = BeaconIdentity(uuid: Fixture.nerderyUUID, major: 1, minor: UInt16(index))
        let rssi: Int8? = index % 7 == 0 ? nil : Int8(-40 - index)
        let time: Double = 1_000 + Double(index) * 0.25
        return Sighting(time: time, receiver: index % 2 == 0 ? "door" : "hall", address: BluetoothAddress(rawValue: UInt64(index)),
                        rssi: rssi, frame: .iBeacon(IBeaconFrame(identity: identity)))
    }

    @Test func theOutboxKeepsTheSightingsExactly() throws {
        let sightings = Self.fifty
        let payload = try BatchOutbox.Payload(ObservedBatch(gatewayID: "g", sightings: sightings, serverTime: 1_000, keepsPositions: true))
        #expect(payload.sightings == BatchOutbox.binaryKind)
        #expect(try BatchOutbox.decode(payload.sightings, data: payload.data) == sightings)
        #expect(throws: RegistryError.self) { try BatchOutbox.decode(BatchOutbox.binaryKind, data: nil) }
        #expect(throws: RegistryError.self) { try BatchOutbox.decode("x:nothing", data: nil) }
        // Rows written by earlier versions still read: base64 of the same form, the compact
        // upload form, JSON.
        let bytes = try #require(payload.data)
        #expect(try BatchOutbox.decode("d:" + bytes.base64EncodedString(), data: nil) == sightings)
        let compact = "c:" + Data(buffer: try CompactSightingBatch.encode(SightingBatch(sequence: nil, sightings: sightings))).base64EncodedString()
        #expect(try BatchOutbox.decode(compact, data: nil) == sightings)
        #expect(try BatchOutbox.decode(try BatchOutbox.json(sightings), data: nil) == sightings)
    }

    /// The row's bytes go through each database's column of bytes and come back the same.
    @Test(arguments: TestBackend.available)
    func anOutboxRowReadsBackFromTheDatabase(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            let batch = ObservedBatch(gatewayID: gateway.id, sightings: Self.fifty + Self.mixed, serverTime: 1_000, keepsPositions: true)
            let id = try await store.database.transaction { db in
                try await BatchOutbox.insert(batch, payload: try BatchOutbox.Payload(batch), observers: ["fleet", "security"], db: db)
            }
            let rows = try await store.database.read { db in try await BatchOutbox.due(before: 1_001, limit: 10, db: db) }
            let row = try #require(rows.first)
            #expect(rows.count == 1 && row.id == id)
            #expect(row.pending == ["fleet", "security"])
            #expect(row.batch.sightings == batch.sightings)
            #expect(row.batch.sightings.map(\.time.bitPattern) == batch.sightings.map(\.time.bitPattern))
        }
    }

    /// Every frame kind, times out of order and far apart, and emitters heard again.
    static let mixed: [Sighting] = [
        Sighting(time: 1_700_000_000.25, receiver: "door", address: BluetoothAddress(rawValue: 7), rssi: -60,
                 frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: Fixture.nerderyUUID, major: 65535, minor: 0), measuredPower: MeasuredPower(-128)))),
        Sighting(time: 1_700_000_000.5, receiver: "hall", address: BluetoothAddress("00:11:22:33:44:55")!, rssi: nil,
                 frame: .altBeacon(AltBeaconFrame(companyID: 0x0118, beaconID: Array(1...20), referenceRSSI: MeasuredPower(-65), reserved: 0))),
        Sighting(time: 3, receiver: "", address: BluetoothAddress("FF:11:22:33:44:56")!, rssi: 20,
                 frame: .eddystone(.uid(namespace: Array(0..<10), instance: Array(10..<16), txPowerAt0m: -20))),
        Sighting(time: -0.0, receiver: "hall", address: BluetoothAddress("00:11:22:33:44:57")!, rssi: -127,
                 frame: .eddystone(.tlm(EddystoneTelemetry(batteryMillivolts: 3000, temperatureCelsius: 21.5, advertisingCount: 1234, uptimeDeciseconds: 99)))),
        Sighting(time: 1_700_000_000.25, receiver: "door", address: BluetoothAddress(rawValue: 7), rssi: -61,
                 frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: Fixture.nerderyUUID, major: 65535, minor: 0), measuredPower: MeasuredPower(-128)))),
    ]

    @Test func theOutboxFormCarriesEveryFrameAndTimeExactly() throws {
        let bytes = try OutboxSightings.encode(Self.mixed)
        let decoded = try OutboxSightings.decode(bytes)
        #expect(decoded == Self.mixed)
        #expect(decoded.map(\.time.bitPattern) == Self.mixed.map(\.time.bitPattern))
        #expect(try OutboxSightings.decode(try OutboxSightings.encode([])) == [])
    }

    /// Bad bytes (a damaged row) are refused with the field and offset, never a crash or a
    /// count larger than the bytes could hold.
    @Test func aDamagedOutboxRowIsRefusedNamingTheField() throws {
        let bytes = try OutboxSightings.encode(Self.mixed)
        for length in 0..<bytes.count {
            #expect(throws: RegistryError.self) { try OutboxSightings.decode(Array(bytes.prefix(length))) }
        }
        var generator = SeededGenerator(seed: 43)
        for _ in 0..<2_000 {
            var damaged = bytes
            damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            _ = try? OutboxSightings.decode(damaged)
        }
        let huge: [UInt8] = [1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
        #expect { try OutboxSightings.decode(huge) } throws: { ($0 as? RegistryError)?.description.contains("receivers at offset 6") == true }
        #expect { try OutboxSightings.decode([1, 0, 0, 0, 9]) } throws: { ($0 as? RegistryError)?.description.contains("trailing") == true
            || ($0 as? RegistryError)?.description.contains("after the last sighting") == true }
    }

    /// What the pipeline's cost rests on: a gateway's batch of 5,000 sightings of 20 beacons.
    @Test func aGatewaysBatchTakesAFewBytesASighting() throws {
        let sightings = (0..<5_000).map { index -> Sighting in
            let minor = UInt16(1 + index % 20)
            return Sighting(time: 1_764_000_000 + Double(index) * 0.01, receiver: "bench", address: BluetoothAddress(rawValue: UInt64(minor)),
                            rssi: Int8(-50 - index % 40), frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: Fixture.nerderyUUID, major: 1, minor: minor))))
        }
        let bytes = try OutboxSightings.encode(sightings)
        let compact = try CompactSightingBatch.encode(SightingBatch(sequence: nil, sightings: sightings)).readableBytes
        #expect(bytes.count * 4 < compact, "\(bytes.count) bytes against the compact form's \(compact)")
        #expect(try OutboxSightings.decode(bytes) == sightings)
    }
}
