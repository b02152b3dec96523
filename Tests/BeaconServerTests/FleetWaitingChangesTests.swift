import BeaconFleet
import BeaconKit
@testable import BeaconServer
import Foundation
import Logging
import NIOCore
import SQLKit
import Testing

/// The fleet checks run in memory, so a batch whose checks change no alert opens no transaction;
/// the alert changes they make wait until a transaction stores them, and a store that fails
/// loses none of them and never puts a clear before its raise.
@Suite("Fleet alert changes waiting for a store")
struct FleetWaitingChangesTests {
    /// A database whose every statement fails, as a connection lost mid-transaction does.
    struct FailingDatabase: SQLDatabase {
        let base: any SQLDatabase
        var logger: Logger { base.logger }
        var eventLoop: any EventLoop { base.eventLoop }
        var dialect: any SQLDialect { base.dialect }
        struct Lost: Error {}

        func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
            eventLoop.makeFailedFuture(Lost())
        }

        func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
            throw Lost()
        }
    }

    static let stranger = BeaconIdentity(uuid: Fixture.nerderyUUID, major: 1, minor: 4242)

    static func heard(_ identity: BeaconIdentity, at time: Double) -> Sighting {
        Sighting(time: time, receiver: "door", address: BluetoothAddress(rawValue: 7), rssi: -60, frame: .iBeacon(IBeaconFrame(identity: identity)))
    }

    @Test func aFailedStoreKeepsItsChangesForTheNextStoreInOrder() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            let registry = try await RegistrySnapshots(store: store).current()
            let fleet = FleetTracking(clock: { 100 })

            // A stranger under the organisation's UUID: the first checks raise `unregistered`.
            #expect(fleet.observe(gatewayID: gateway.id, sightings: [Self.heard(Self.stranger, at: 99)], registry: registry))
            #expect(fleet.runChecks(registry: registry))
            await #expect(throws: FailingDatabase.Lost.self) {
                try await store.database.read { db in try await fleet.storeWaiting(db: FailingDatabase(base: db)) }
            }
            #expect(fleet.hasWaitingChanges, "the failed store lost its alert changes")

            // Gateway time moves past the stranger's memory: the next checks clear it, and the
            // one store that follows writes the raise first.
            let later = 99 + FleetSettings().unregisteredMemory + 2
            #expect(fleet.observe(gatewayID: gateway.id, sightings: [Self.heard(office.mordor.identity, at: later)], registry: registry))
            #expect(fleet.runChecks(registry: registry))
            let stored = try await store.database.transaction { db in try await fleet.storeWaiting(db: db) }
            let unregistered = stored.filter { $0.fleet?.check == .unregistered }
            #expect(unregistered.map(\.kindName) == ["alertRaised", "alertCleared"])
            #expect(!fleet.hasWaitingChanges)
            let again = try await store.database.transaction { db in try await fleet.storeWaiting(db: db) }
            #expect(again.isEmpty, "a stored change was stored twice")
        }
    }

    @Test func checksThatChangeNothingLeaveNothingToStore() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            let registry = try await RegistrySnapshots(store: store).current()
            let fleet = FleetTracking(clock: { 100 })
            // The first checks may open what a first hearing opens; stored, they leave nothing.
            #expect(fleet.observe(gatewayID: gateway.id, sightings: [Self.heard(office.mordor.identity, at: 98)], registry: registry))
            fleet.runChecks(registry: registry)
            _ = try await store.database.transaction { db in try await fleet.storeWaiting(db: db) }
            #expect(!fleet.hasWaitingChanges)
            // A second later the same beacon is heard the same way: the checks run and change nothing.
            #expect(fleet.observe(gatewayID: gateway.id, sightings: [Self.heard(office.mordor.identity, at: 99)], registry: registry))
            #expect(!fleet.runChecks(registry: registry), "the same hearing a second later changed an alert")
            #expect(!fleet.hasWaitingChanges)
        }
    }
}
