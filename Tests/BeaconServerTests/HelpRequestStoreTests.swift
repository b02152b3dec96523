import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

/// Help requests on every backend (SQLite, and the PostgreSQL the tests start): migration 7,
/// the store's transitions and totals, a gateway's ranging of the visitor's beacon, and deletion
/// of the visitor's phone taking its requests with it.
@Suite("Help request store")
struct HelpRequestStoreTests {
    @Test(arguments: TestBackend.available)
    func requestsMoveOnAndAreCounted(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let now = AppsHarness.monday
            let consent = DeviceConsent(events: true, positions: false)
            let visitor = try await store.registerDevice(NewDevice(siteID: office.site.id, name: "Ann", consent: consent), now: now)
            let helper = try await store.registerDevice(NewDevice(siteID: office.site.id, name: "Bob", consent: consent), now: now)
            _ = try await store.addHelper(deviceID: helper.device.id, now: now)
            #expect(try await store.helpers(siteID: office.site.id).map(\.id) == [helper.device.id])
            #expect(try await store.helperSite(deviceID: helper.device.id) == office.site.id)

            let filed = try await store.fileHelpRequest(deviceID: visitor.device.id, NewHelpRequest(name: " Ann ", minor: 77), now: now)
            #expect(filed.name == "Ann" && filed.state == .open && filed.version == 1)
            await #expect { try await store.fileHelpRequest(deviceID: helper.device.id, NewHelpRequest(minor: 77), now: now) } throws: { error in
                (error as? RegistryError)?.field == "minor"
            }

            // A gateway ranging the visitor's beacon gives the live distance.
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            try await store.database.transaction { db in
                try await db.raw("""
                    INSERT INTO ranging_state (gateway_id, uuid, major, minor, rssi, distance, proximity, time)
                    VALUES (\(bind: gateway.id), \(bind: filed.beacon.uuid.uuidString), 999, 77, -70, 4.5, 'far', 100)
                    """).run()
            }
            let ranged = try await store.helpRequest(id: filed.id)
            #expect(ranged.gatewayDistance?.receiverName == "door" && ranged.gatewayDistance?.distance == 4.5)

            let helping = HelpHelper(id: "device-\(helper.device.id)", name: "Bob", deviceID: helper.device.id)
            let acknowledged = try await store.acknowledgeHelpRequest(id: filed.id, helper: helping, now: now + 10)
            #expect(acknowledged.state == .acknowledged && acknowledged.helper == helping)
            _ = try await store.reachHelpRequest(id: filed.id, by: "helper", now: now + 40)
            let done = try await store.finishHelpRequest(id: filed.id, as: .done, now: now + 50)
            #expect(done.state == .done && done.doneAt == now + 50 && done.gatewayDistance == nil)
            await #expect { try await store.finishHelpRequest(id: filed.id, as: .cancelled, now: now + 60) } throws: { error in
                (error as? RegistryError)?.field == "state"
            }
            let changes = try await store.helpChanges(after: 0, requestID: filed.id, siteID: nil)
            #expect(changes.map(\.kind) == ["filed", "acknowledged", "reached", "done"])
            #expect(try await store.helpChanges(after: changes[1].id, requestID: nil, siteID: office.site.id).map(\.kind) == ["reached", "done"])

            let metrics = try await store.helpMetrics(siteID: office.site.id)
            #expect(metrics.sites.first?.meanSecondsToAcknowledge == 10 && metrics.sites.first?.meanSecondsToReach == 30)
            #expect(metrics.helpers.first?.helper == helping && metrics.helpers.first?.done == 1)
            #expect(try await store.helpRequests(siteID: office.site.id, state: .done, limit: 10).map(\.id) == [filed.id])

            // Deleting the visitor's phone deletes its requests; the totals stay.
            try await store.deleteDevice(id: visitor.device.id)
            await #expect(throws: RegistryError.self) { try await store.helpRequest(id: filed.id) }
            #expect(try await store.helpMetrics(siteID: office.site.id).sites.first?.done == 1)
        }
    }
}
