import BeaconKit
import BeaconLocate
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// On a site with a map, a device is a phone the site tracks, but only when it consented to
/// positions: without that consent it gets no position, no room events and no ranging state.
@Suite("Device consent on a mapped site")
struct DeviceConsentPositionTests {
    @Test func onlyAConsentingDeviceIsLocated() async throws {
        try await PositionTests.withSite { site, client in
            let store = site.harness.server.store
            let siteID = site.siteID
            let sharing = try await store.registerDevice(NewDevice(siteID: siteID, name: "shares", consent: DeviceConsent(events: true, positions: true)))
            let keeping = try await store.registerDevice(NewDevice(siteID: siteID, name: "keeps", consent: DeviceConsent(events: true, positions: false)))
            site.gateways["sharing"] = sharing.device.id
            site.gateways["keeping"] = keeping.device.id
            // The same walk for both, one after the other, through the walls' radio of the map.
            try await site.run(100...110, phone: ("sharing", Position(x: 15, y: 7)), carriedThroughWalls: false)
            try await site.run(111...121, phone: ("keeping", Position(x: 15, y: 7)), carriedThroughWalls: false)

            let rooms = try await store.events(after: 0).compactMap(\.room)
            let sharingName = Device.gatewayName(id: sharing.device.id)
            let keepingName = Device.gatewayName(id: keeping.device.id)
            #expect(rooms.contains { $0.subject.name == sharingName && $0.kind == .roomEnter && $0.room == "east" }, "\(rooms)")
            #expect(!rooms.contains { $0.subject.name == keepingName })
            let positions = try await client.execute(uri: "/v1/positions?site=\(siteID)", method: .get, headers: site.harness.headers(.readOnly)) {
                try $0.json(ProximaServer.PositionsReply.self)
            }
            #expect(!positions.positions.contains { $0.subject == keepingName })
            #expect(try await store.rangingState(gatewayID: keeping.device.id).isEmpty)
            #expect(try await !store.rangingState(gatewayID: sharing.device.id).isEmpty)
            // Both still get their enter events.
            for device in [sharing.device, keeping.device] {
                #expect(try await !store.events(after: 0, filter: EventFilter(gatewayID: device.id)).filter { $0.kindName == "enter" }.isEmpty)
            }
        }
    }
}
