import BeaconKit
@testable import BeaconServer
import Foundation
import Synchronization
import Testing

/// Devices and messages of the day on every backend (SQLite, and the PostgreSQL the tests start):
/// migration 6, the store's queries, and a device's enter event stored with its message.
@Suite("Device and message store")
struct DeviceStoreTests {
    @Test(arguments: TestBackend.available)
    func devicesAndMessagesRoundTrip(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let zone = try #require(try await store.zones(siteID: office.site.id).first)
            let now = AppsHarness.monday
            let named = try await store.registerDevice(NewDevice(siteID: office.site.id, name: "Ann", consent: DeviceConsent(events: true, positions: true)), now: now)
            let anonymous = try await store.registerDevice(NewDevice(siteID: office.site.id, anonymous: true, consent: DeviceConsent(events: true, positions: false)), now: now + 1)
            #expect(try await store.devices(siteID: office.site.id).devices.map(\.id) == [named.device.id, anonymous.device.id].sorted())
            #expect(try await store.device(id: anonymous.device.id) == anonymous.device)
            let principal = try #require(try await store.authenticate(token: named.token))
            #expect(principal.role == .device)
            #expect(principal.gatewayID == named.device.id)

            let schedule = MessageSchedule(days: [.mon], timeOfDay: .init(start: "09:00", end: "17:00"), timeZone: "Europe/London")
            let zoneMessage = try await store.createMessage(NewDayMessage(zoneID: zone.id, format: .html, body: "<p>Welcome<script>x</script></p>", schedule: schedule), now: now)
            #expect(zoneMessage.message.body == "<p>Welcome</p>")
            #expect(try await store.messages(zoneID: zone.id).map(\.id) == [zoneMessage.message.id])
            #expect(try await store.message(id: zoneMessage.message.id) == zoneMessage.message)
            // Monday 12:00 UTC is 12:00 in London in November: inside; 18:00 is not.
            #expect(try await store.messageLookup(office.mordor.identity, at: now).message?.id == zoneMessage.message.id)
            #expect(try await store.messageLookup(office.mordor.identity, at: now + 6 * 3600).message == nil)

            let replaced = try await store.replaceMessage(id: zoneMessage.message.id, with: NewDayMessage(beaconID: office.mordor.id, body: "Plain"), now: now + 5)
            #expect(replaced.message.zoneID == nil && replaced.message.beaconID == office.mordor.id)
            #expect(replaced.message.createdAt == now && replaced.message.updatedAt == now + 5)
            #expect(try await store.messageLookup(office.mordor.identity, at: now + 6 * 3600).message?.body == "Plain")

            // The device's sightings through ingestion: its enter is stored with the message.
            let server = ProximaServer(store: store, clock: { now })
            let sightings = (0..<5).map { step in
                Sighting(time: now - 1 + Double(step) * 0.2, receiver: "phone", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: -60,
                         frame: .iBeacon(IBeaconFrame(identity: office.mordor.identity, measuredPower: MeasuredPower(-59))))
            }
            let result = try await server.accept(SightingBatch(sequence: 1, sightings: sightings), gatewayID: named.device.id)
            #expect(result.events.first?.message?.body == "Plain")
            let stored = try await store.events(after: 0, filter: EventFilter(gatewayID: named.device.id))
            #expect(stored.count == 1)
            #expect(stored.first?.message == result.events.first?.message)
            await server.shutdown()

            try await store.deleteMessage(id: zoneMessage.message.id)
            #expect(try await store.messages().isEmpty)
            try await store.deleteDevice(id: named.device.id)
            #expect(try await store.authenticate(token: named.token) == nil)
            #expect(try await store.events(after: 0, filter: EventFilter(gatewayID: named.device.id)).isEmpty)
            #expect(try await store.events(after: 0).allSatisfy { $0.gatewayID != named.device.id })
            #expect(try await store.devices().devices.map(\.id) == [anonymous.device.id])
            #expect(try await store.gateways().map(\.id).contains(named.device.id) == false)
        }
    }
}
