@testable import BeaconServer
import Foundation
import Testing

/// A phone moves: what it hears says nothing of a beacon's coverage, so the fleet checks must
/// never count a device as a fixed gateway, even on a site without a map (where every ordinary
/// gateway is taken as fixed).
@Suite("Devices in the fleet registry")
struct DeviceFleetTests {
    @Test func aDeviceIsNeverAFixedGatewayEvenWithoutAMap() async throws {
        try await AppsHarness.with { harness in
            let (device, _) = try await harness.register(positions: true)
            let registry = try await harness.server.store.database.read { db in try await FleetRegistry.load(db: db) }
            let deviceName = try #require(registry.gatewaysByID[device.id]?.name)
            let doorName = try #require(registry.gatewaysByID[harness.gatewayID]?.name)
            let fixedByName = Dictionary(registry.gateways.map { ($0.name, $0.isFixed) }, uniquingKeysWith: { first, _ in first })
            #expect(fixedByName[deviceName] == false, "the device \(deviceName) was taken as a fixed gateway")
            #expect(fixedByName[doorName] == true, "the door gateway of a site without a map is fixed")
        }
    }
}
