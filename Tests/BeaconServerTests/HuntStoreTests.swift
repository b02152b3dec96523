import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

/// Hunts and offers on every backend (SQLite, and the PostgreSQL the tests start): migration 9,
/// the store's queries, and ingestion running both applications in the batch's transaction.
@Suite("Hunt and offer store")
struct HuntStoreTests {
    static func batch(_ beacon: Beacon, at time: Double, sequence: Int, rssi: Int8 = -60) -> SightingBatch {
        let sightings = (0..<30).map { step in
            Sighting(time: time - 2.9 + Double(step) * 0.1, receiver: "phone", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: rssi,
                     frame: .iBeacon(IBeaconFrame(identity: beacon.identity, measuredPower: MeasuredPower(-59))))
        }
        return SightingBatch(sequence: sequence, sightings: sightings)
    }

    @Test(arguments: TestBackend.available)
    func huntsAndOffersThroughIngestion(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let far = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 1, label: "Far end", position: Position(x: 52, y: 8), state: .deployed))
            let zones = try await store.zones(siteID: office.site.id)
            let stampZones = [office.mordor, far].map { beacon in zones.first { $0.minor == beacon.minor }!.id }
            let now = AppsHarness.monday
            let hunt = try await store.createHunt(NewHunt(siteID: office.site.id, name: "Two stamps", stampZoneIDs: stampZones, timeLimit: 600, reward: "mug"), now: now)
            #expect(try await store.hunt(id: hunt.id) == hunt)
            #expect(try await store.hunts(siteID: office.site.id) == [hunt])
            let offer = try await store.createOffer(NewOffer(zoneID: stampZones[1], title: "Far deal", body: "5 % off"), now: now)
            #expect(try await store.offers(siteID: office.site.id, zoneID: nil) == [offer])
            let replaced = try await store.replaceOffer(id: offer.id, with: NewOffer(zoneID: stampZones[1], title: "Far deal", body: "10 % off"), now: now + 1)
            #expect(replaced.body == "10 % off" && replaced.createdAt == now)
            _ = try await store.setOfferSettings(siteID: office.site.id, OfferSettings(perWindow: 1, window: 600, reach: 5, maxChoices: 3, freshness: 10))

            let device = try await store.registerDevice(NewDevice(siteID: office.site.id, name: "Ann", consent: DeviceConsent(events: true, positions: true)), now: now).device
            let clock = AppsHarness.Clock(now)
            let ingestion = IngestService(store: store, instance: "test", clock: { clock.now })
            // 40 m from Mordor to the far end in 5 s: refused. A second device walks it in 40 s.
            _ = try await ingestion.ingest(gatewayID: device.id, batch: Self.batch(office.mordor, at: now, sequence: 1))
            clock.set(now + 5)
            _ = try await ingestion.ingest(gatewayID: device.id, batch: Self.batch(far, at: now + 5, sequence: 2))
            let walker = try await store.registerDevice(NewDevice(siteID: office.site.id, anonymous: true, consent: DeviceConsent(events: true, positions: true)), now: now).device
            _ = try await ingestion.ingest(gatewayID: walker.id, batch: Self.batch(office.mordor, at: now, sequence: 1))
            let finishing = Self.batch(far, at: now + 40, sequence: 2)
            clock.set(now + 40)
            _ = try await ingestion.ingest(gatewayID: walker.id, batch: finishing)
            clock.set(now + 100)
            #expect(try await ingestion.ingest(gatewayID: walker.id, batch: finishing).duplicate)

            let refused = try #require(try await store.huntRuns(deviceID: device.id).first)
            #expect(refused.status == .refused && refused.reason?.hasPrefix("stamps 1→2 in 5 s, 40 m apart") == true, "\(refused.reason ?? "")")
            let finished = try #require(try await store.huntRuns(deviceID: walker.id).first)
            #expect(finished.status == .finished && finished.duration == 40 && finished.rewardedAt == now + 40 && finished.name == nil)
            let board = try await store.huntLeaderboard(huntID: hunt.id, limit: 10)
            #expect(board.leaders.map(\.deviceID) == [walker.id] && board.counts["refused"] == 1)
            #expect(try await store.huntRuns(huntID: hunt.id, status: nil, limit: 10).count == 2)

            // Both reached the far end's offer; the walker's resent batch was not offered again.
            #expect(try await store.deviceOffers(deviceID: walker.id).delivered == 1)
            #expect(try await store.deviceOffers(deviceID: device.id).deliveries.first?.choices.map(\.offerID) == [offer.id])
            let counts = try await store.offerSettings(siteID: office.site.id)
            #expect(counts.delivered == 2 && counts.refused == 0 && counts.settings.perWindow == 1)

            try await store.deleteDevice(id: device.id)
            #expect(try await store.huntLeaderboard(huntID: hunt.id, limit: 10).counts["refused"] == 0)
            try await store.deleteOffer(id: offer.id)
            try await store.deleteHunt(id: hunt.id)
            #expect(try await store.hunts(siteID: nil).isEmpty)
            #expect(try await store.offers(siteID: nil, zoneID: nil).isEmpty)
        }
    }
}
