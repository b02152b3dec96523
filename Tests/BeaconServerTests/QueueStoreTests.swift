import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

/// Check-ins and queues on every backend (SQLite, and the PostgreSQL the tests start): migration
/// 8, the applications' writes inside ingestion, the reports, and deletion with the device.
@Suite("Check-in and queue store")
struct QueueStoreTests {
    @Test(arguments: TestBackend.available)
    func checkinsAndQueuesRoundTrip(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let entry = try #require(try await store.zones(siteID: office.site.id).first)
            let restroom = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 2, label: "Restroom",
                                                               position: Position(x: 30, y: 8), installedOn: "2014-03-01", state: .deployed))
            let service = try #require(try await store.zones(siteID: office.site.id).first { $0.minor == restroom.minor })
            let now = AppsHarness.monday
            let queue = try await store.createQueue(NewQueue(name: "Desk", entryZoneID: entry.id, serviceZoneID: service.id, abandonAfter: 60), now: now)
            #expect(try await store.queues(siteID: office.site.id) == [queue])
            #expect(try await store.setCheckinZone(zoneID: entry.id, rule: CheckinZoneRule(dwell: 5, absence: 60), now: now).siteID == office.site.id)
            let device = try await store.registerDevice(NewDevice(siteID: office.site.id, name: "Ann", consent: DeviceConsent(events: true, positions: false)), now: now)

            let clock = AppsHarness.Clock(now)
            let server = ProximaServer(store: store, clock: { clock.now })
            func post(_ identity: BeaconIdentity, at time: Double, sequence: Int) async throws {
                clock.set(time)
                let sightings = (0..<5).map { step in
                    Sighting(time: time - 4 + Double(step), receiver: "phone", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: -60,
                             frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))))
                }
                _ = try await server.accept(SightingBatch(sequence: sequence, sightings: sightings), gatewayID: device.device.id)
            }
            try await post(office.mordor.identity, at: now, sequence: 1)
            try await post(office.mordor.identity, at: now + 10, sequence: 2)
            try await post(restroom.identity, at: now + 40, sequence: 3)
            try await post(restroom.identity, at: now + 40, sequence: 3)
            await server.shutdown()

            let checkins = try await store.checkins(deviceID: device.device.id, limit: 10)
            #expect(checkins.checkins.map(\.time) == [now - 4 + 5])
            #expect(checkins.loyalty.map(\.count) == [1])
            let report = try await store.queueReport(id: queue.id, hours: 24, now: now + 40)
            #expect(report.total.served == 1 && report.total.abandoned == 0)
            #expect(report.last15Minutes.p50 == 40)
            #expect(report.clock == now + 40)

            // Deleting the device forgets its check-ins and passages; the hour's counts stay.
            try await store.deleteDevice(id: device.device.id)
            await #expect(throws: RegistryError.self) { _ = try await store.checkins(deviceID: device.device.id, limit: 10) }
            let after = try await store.queueReport(id: queue.id, hours: 24, now: now + 40)
            #expect(after.last15Minutes.served == 0 && after.total.served == 1)
            try await store.deleteQueue(id: queue.id)
            try await store.deleteCheckinZone(zoneID: entry.id)
            let queuesLeft = try await store.queues(siteID: nil), zonesLeft = try await store.checkinZones(siteID: nil)
            #expect(queuesLeft.isEmpty && zonesLeft.isEmpty)
        }
    }
}
