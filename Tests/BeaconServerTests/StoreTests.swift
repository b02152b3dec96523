@testable import BeaconGateway
import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

/// One suite, run on SQLite and on a real PostgreSQL.
@Suite("Store on every backend")
struct StoreTests {
    @Test(arguments: TestBackend.available)
    func migrationsRunOnceAndReopenCleanly(backend: TestBackend) async throws {
        let location = try backend.location()
        let first = try await ProximaDatabase.open(location)
        let store = Store(database: first)
        _ = try await store.createOrganisation(name: "Kept", proximityUUIDs: [Fixture.nerderyUUID])
        await first.close()
        let second = try await ProximaDatabase.open(location)
        let names = try await Store(database: second).organisations().map(\.name)
        await second.close()
        if case .sqliteFile(let path) = location {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        #expect(names == ["Kept"])
    }

    @Test(arguments: TestBackend.available)
    func resolvesIdentityToHumanLabel(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            #expect(office.site.major == 1)
            #expect(office.mordor.minor == 1001)
            let resolved = try await store.resolve(office.mordor.identity)
            #expect(resolved?.label == "Bloomington Office – Conference Room: Mordor")
            #expect(resolved?.siteID == office.site.id)
            let unknownMinor = BeaconIdentity(uuid: Fixture.nerderyUUID, major: 1, minor: 4242)
            #expect(try await store.resolve(unknownMinor)?.label == "Bloomington Office – minor 4242")
            #expect(try await store.resolve(BeaconIdentity(uuid: Fixture.nerderyUUID, major: 9, minor: 1)) == nil)
        }
    }

    @Test(arguments: TestBackend.available)
    func allocatesNextFreeMinorPerCategoryAndMajorPerSite(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let second = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 1, label: "Rivendell", position: Position(x: 1, y: 1)))
            let restroom = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 2, label: "North", position: Position(x: 2, y: 2)))
            #expect(second.minor == 1002)
            #expect(restroom.minor == 2001)
            #expect(second.state == .planned)
            let other = try await store.createSite(NewSite(organisationID: office.organisation.id, name: "Minneapolis Office"))
            #expect(other.major == 2)
            let explicit = try await store.createSite(NewSite(organisationID: office.organisation.id, major: 7, name: "Seven"))
            #expect(explicit.major == 7)
            await #expect(throws: RegistryError.self) {
                try await store.createSite(NewSite(organisationID: office.organisation.id, major: 7, name: "Clash"))
            }
            let next = try await store.createSite(NewSite(organisationID: office.organisation.id, name: "Three"))
            #expect(next.major == 3)
        }
    }

    @Test(arguments: TestBackend.available)
    func refusesAFullCategoryGroupClearly(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            // Category 65 holds only 65001…65535 (535 minors) and is the fastest to fill.
            let plan = (0..<535).map { PlannedPosition(category: 65, label: "Shelf \($0)", x: 1, y: 1) }
            let configured = try await store.configure(siteID: office.site.id, plan: plan)
            #expect(configured.first?.minor == 65001)
            #expect(configured.last?.minor == 65535)
            do {
                _ = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 65, label: "One too many", position: Position(x: 1, y: 1)))
                Issue.record("a full group must be refused")
            } catch let error as RegistryError {
                #expect(error.kind == .exhausted)
                #expect(error.message.contains("category 65 of site 'Bloomington Office' is full"))
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func bulkConfigurationIsAllOrNothing(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let before = try await store.beacons(siteID: office.site.id).count
            let plan = [
                PlannedPosition(category: 3, label: "Door", x: 1, y: 1),
                PlannedPosition(category: 3, label: "Off the plan", x: 500, y: 1),
            ]
            do {
                _ = try await store.configure(siteID: office.site.id, plan: plan)
                Issue.record("a position outside the floor plan must refuse the plan")
            } catch let error as RegistryError {
                #expect(error.field == "plan[1].position")
            }
            #expect(try await store.beacons(siteID: office.site.id).count == before)
            let good = try await store.configure(siteID: office.site.id, plan: [
                PlannedPosition(category: 3, label: "Door", x: 1, y: 1, measuredPower: -61),
                PlannedPosition(category: 3, label: "Till", x: 5, y: 2),
            ])
            #expect(good.map(\.minor) == [3001, 3002])
            #expect(good[0].measuredPower == -61)
            #expect(try await store.beacons(siteID: office.site.id).count == before + 2)
        }
    }

    @Test(arguments: TestBackend.available)
    func noTwoDeployedBeaconsShareAnIdentity(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            // A replacement transmitter for Mordor's zone shares its identity.
            let replacement = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 1, label: "Mordor", position: Position(x: 12, y: 8), minor: 1001))
            #expect(replacement.identity == office.mordor.identity)
            #expect(replacement.state == .planned)
            do {
                _ = try await store.setBeaconState(id: replacement.id, state: .deployed)
                Issue.record("deploying a second beacon with one identity must be refused")
            } catch let error as RegistryError {
                #expect(error.kind == .conflict)
                #expect(error.message.contains("beacon \(office.mordor.id) is already deployed"))
            }
            await #expect(throws: RegistryError.self) {
                try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 1, label: "Mordor", position: Position(x: 1, y: 1), minor: 1001, state: .deployed))
            }
            #expect(try await store.identityConflicts().isEmpty)
            _ = try await store.setBeaconState(id: office.mordor.id, state: .retired)
            let deployed = try await store.setBeaconState(id: replacement.id, state: .deployed, installedOn: "2015-01-02")
            #expect(deployed.installedOn == "2015-01-02")
            #expect(try await store.zones(siteID: office.site.id).count == 1)
            #expect(try await store.identityConflicts().isEmpty)
        }
    }

    @Test(arguments: TestBackend.available)
    func directoryRoundTripsThroughJSONAndCSV(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            _ = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 2, label: "Hobbiton, \"west\"", position: Position(x: 3.5, y: 4)))
            let exported = try await store.directory(organisationID: office.organisation.id)
            #expect(exported.locations.count == 1)
            #expect(exported.locations[0].minors.map(\.minor) == [1001, 2001])
            #expect(exported.categories == ["1": "Conference Room", "2": "Restroom"])
            let json = try JSONEncoder().encode(exported)
            let csv = exported.csv()
            #expect(csv.contains("\"Hobbiton, \"\"west\"\"\""))

            // Import both forms into fresh stores; the directory comes back identical.
            try await backend.withStore { other in
                try await other.importDirectory(try JSONDecoder().decode(Directory.self, from: json))
                #expect(try await other.directory(organisationID: office.organisation.id) == exported)
                #expect(try await other.resolve(office.mordor.identity)?.label == "Bloomington Office – Conference Room: Mordor")
            }
            try await backend.withStore { other in
                let organisation = try await other.createOrganisation(name: "Nerdery", proximityUUIDs: [Fixture.nerderyUUID], id: office.organisation.id)
                try await other.importDirectory(try Directory.parseCSV(csv, organisation: organisation))
                let back = try await other.directory(organisationID: organisation.id)
                #expect(back.locations[0].minors == exported.locations[0].minors)
                #expect(back.categories == exported.categories)
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func tokensAreStoredHashedAndCarryRoles(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let issued = try await store.issueToken(name: "ops", role: .operator)
            #expect(issued.token.hasPrefix("px_"))
            let principal = try await store.authenticate(token: issued.token)
            #expect(principal?.role == .operator)
            #expect(try await store.authenticate(token: issued.token + "x") == nil)
            let stored = try await store.database.read { db in
                try await db.raw("SELECT hash FROM tokens").all().map { try $0.decode(column: "hash", as: String.self) }
            }
            #expect(stored == [TokenHashing.hash(issued.token)])
            #expect(!stored.contains(issued.token))
            let (gateway, gatewayToken) = try await store.registerGateway(name: "door")
            #expect(try await store.authenticate(token: gatewayToken.token)?.gatewayID == gateway.id)
        }
    }

    /// Issue 9, item 1: 15,000 distinct identities through one gateway, 500 per batch. The
    /// stored checkpoint stays within the gateway's beacon limit, each batch writes the rows of
    /// the beacons it touched (not of every beacon heard), and the monitor stays in memory
    /// between batches (read back in full once; a second instance reads it once too).
    @Test(arguments: TestBackend.available)
    func aFloodOfIdentitiesKeepsTheCheckpointBounded(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let (gateway, _) = try await store.registerGateway(name: "busy")
            let limit = 400, batchSize = 200
            let settings = GatewaySettings(beaconLimit: limit)
            let service = IngestService(store: store, instance: "a", settings: settings, clock: { 10_000 })
            var rowsWritten: [Int] = []
            var forgotten = 0
            for batch in 0..<30 {
                let sightings = (0..<batchSize).map { index in
                    let n = batch * batchSize + index
                    return Sighting(time: 5_000 + Double(n) / 10, receiver: "busy", address: BluetoothAddress(rawValue: UInt64(n)), rssi: -70,
                                    frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: Fixture.nerderyUUID, major: UInt16(n / 65_536), minor: UInt16(n % 65_536)))))
                }
                let result = try await service.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: batch, sightings: sightings))
                #expect(!result.duplicate)
                rowsWritten.append(result.beaconRowsWritten)
                forgotten += result.forgottenBeacons
            }
            let (rows, headerBytes) = try await store.database.read { db in
                let rows = try await db.raw("SELECT COUNT(*) AS n FROM gateway_beacons WHERE gateway_id = \(bind: gateway.id)").first()!.int("n")
                let header = try await db.raw("SELECT state FROM gateway_checkpoints WHERE gateway_id = \(bind: gateway.id)").first()!.string("state")
                return (rows, header.utf8.count)
            }
            #expect(rows <= limit)
            #expect(forgotten >= 30 * batchSize - limit)
            // The header holds the clock and the last 64 sequences, nothing per beacon.
            #expect(headerBytes < 2_048)
            #expect(rowsWritten[0] == batchSize)
            #expect(rowsWritten.max()! <= 3 * rowsWritten[0], "\(rowsWritten)")
            #expect(service.fullLoads == 1)
            // Another instance finds its copy missing, reads the rows once, and continues.
            let other = IngestService(store: store, instance: "b", settings: settings, clock: { 10_000 })
            let next = Sighting(time: 7_000, receiver: "busy", address: BluetoothAddress(rawValue: 1), rssi: -70,
                                frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: Fixture.nerderyUUID, major: 1, minor: 1))))
            #expect(try await other.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 29, sightings: [next])).duplicate)
            #expect(try await other.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 30, sightings: [next])).accepted == 1)
            #expect(other.fullLoads == 1)
            // And the first instance sees its copy is stale.
            _ = try await service.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 31, sightings: [next]))
            #expect(service.fullLoads == 2)
        }
    }

    @Test(arguments: TestBackend.available)
    func ingestCheckpointsMonitorAndIgnoresRetries(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door")
            func sighting(_ time: Double, rssi: Int8 = -60) -> Sighting {
                Sighting(time: time, receiver: "door", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: rssi,
                         frame: .iBeacon(IBeaconFrame(identity: office.mordor.identity, measuredPower: MeasuredPower(-59))))
            }
            let a = IngestService(store: store, instance: "a", clock: { 100 })
            let b = IngestService(store: store, instance: "b", clock: { 100 })
            let first = try await a.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 0, sightings: [sighting(1), sighting(2)]))
            #expect(first.events.map(\.kindName) == ["enter"])
            #expect(first.events.first?.label == "Bloomington Office – Conference Room: Mordor")
            #expect(first.events.first?.siteID == office.site.id)
            let retry = try await b.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 0, sightings: [sighting(1), sighting(2)]))
            #expect(retry.duplicate)
            // A beacon heard again after the timeout exits and re-enters; the checkpoint was
            // written by instance a and continued by b.
            let later = try await b.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 1, sightings: [sighting(70)]))
            #expect(later.events.map(\.kindName) == ["exit", "enter"])
            // The evidence exit rule: one gap of 1 s says next to nothing of a rate, so the
            // predicted silence is past the 60 s ceiling: the exit is dated 60 s after the last
            // sighting at 2.
            let expectedExit = 2 + EvidenceExitParameters.default.ceiling
            #expect(abs((later.events.first?.time ?? 0) - expectedExit) < 1e-3)
            #expect(try await store.checkpoint(gatewayID: gateway.id)?.updatedBy == "b")
            let stored = try await store.events(after: 0)
            #expect(stored.map(\.kindName) == ["enter", "exit", "enter"])
            #expect(try await store.events(after: 0, filter: EventFilter(siteID: office.site.id + 1)).isEmpty)
            let ranging = try await store.rangingState(gatewayID: gateway.id)
            #expect(ranging.count == 1)
            // Ranging state is the last completed 1 s cycle: the cycle of the sighting at 30
            // ends with the gateway's next batch, so the stored reading is the one of 1–2 s.
            #expect(ranging.first?.time == 2)
        }
    }
}
