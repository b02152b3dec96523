import BeaconKit
import BeaconServer
import BeaconSimulator
import Foundation
import Logging
import ServiceLifecycle

/// The retail example: a corner shop with an entrance, three departments and a till, one
/// beacon each, and a shopper whose phone acts as the gateway. `proxima serve --demo` seeds it
/// and feeds the simulation through the same path as a real gateway's batches.
enum RetailDemo {
    static let uuid = UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!
    static let organisationName = "Proxima Retail"
    static let siteName = "High Street Store"
    static let gatewayName = "demo-shopper"

    struct Spot {
        var category: Int
        var label: String
        var x: Double
        var y: Double
    }

    static let categories = [Category(code: 1, name: "Entrance"), Category(code: 2, name: "Department"), Category(code: 3, name: "Checkout")]
    static let spots = [
        Spot(category: 1, label: "Front Door", x: 2, y: 10),
        Spot(category: 2, label: "Electronics", x: 14, y: 3),
        Spot(category: 2, label: "Shoes", x: 28, y: 17),
        Spot(category: 2, label: "Groceries", x: 38, y: 4),
        Spot(category: 3, label: "Till", x: 10, y: 17),
    ]

    /// `serve --demo`: seeds the shop and returns the shopper's gateway.
    @Sendable static func start(server: ProximaServer, logger: Logger) async throws -> ServeDemoStarted {
        let (identities, gatewayID) = try await seed(server.store)
        let gateway = DemoGatewayService(server: server, scenario: scenario(identities: identities), gatewayID: gatewayID, logger: logger)
        return ServeDemoStarted(gateway: gateway, description: "simulating a shopper in '\(siteName)'")
    }

    /// Registers the shop (once) and returns the identities of its beacons in `spots` order,
    /// and the id of the demo gateway.
    static func seed(_ store: Store) async throws -> (identities: [BeaconIdentity], gatewayID: String) {
        if let site = try await store.sites().first(where: { $0.name == siteName && $0.uuid == uuid }),
           let gateway = try await store.gateways().first(where: { $0.name == gatewayName }) {
            let beacons = try await store.beacons(siteID: site.id)
            return (beacons.map(\.identity), gateway.id)
        }
        let organisation = try await store.createOrganisation(name: organisationName, proximityUUIDs: [uuid])
        for category in categories { try await store.setCategory(category) }
        let site = try await store.createSite(NewSite(organisationID: organisation.id, name: siteName,
                                                      address: "1 High Street", planWidth: 40, planHeight: 20))
        let configurations = try await store.configure(siteID: site.id, plan: spots.map {
            PlannedPosition(category: $0.category, label: $0.label, x: $0.x, y: $0.y)
        })
        for configuration in configurations {
            _ = try await store.setBeaconState(id: configuration.beaconID, state: .deployed, installedOn: "2024-05-01")
        }
        let (gateway, _) = try await store.registerGateway(name: gatewayName, siteID: site.id)
        return (configurations.map { BeaconIdentity(uuid: $0.uuid, major: $0.major, minor: $0.minor) }, gateway.id)
    }

    /// The shop as a simulator scenario: short-range beacons (presence within about 6 m) and a
    /// shopper looping entrance → electronics → shoes → groceries → till.
    static func scenario(identities: [BeaconIdentity], duration: Double = 3600, seed: UInt64 = 7) -> Scenario {
        let beacons = zip(spots, identities).enumerated().map { index, pair in
            SimulatedBeacon(name: pair.0.label, identity: pair.1,
                            address: BluetoothAddress(rawValue: 0xC0FFEE_000000 + UInt64(index + 1)),
                            position: Position3D(x: pair.0.x, y: pair.0.y), measuredPower: MeasuredPower(-59), txPower: -12, interval: 0.2)
        }
        let stops = spots.map { WalkerPath.Waypoint(Position3D(x: $0.x + 1, y: $0.y), pause: 20) }
        let path = WalkerPath(waypoints: stops + [stops[0]], speed: 1.2, loop: true)
        return Scenario(
            name: "retail demo", seed: seed, duration: duration, venue: Venue(width: 40, height: 20),
            channel: ChannelModel(shadowingSigma: 2, sensitivity: -88, presenceThreshold: -88),
            beacons: beacons,
            receivers: [SimulatedReceiver(name: gatewayName, placement: .walking(path), body: false)],
            regions: zip(spots, identities).map { SimulatedRegion(name: $0.0.label, uuid: $0.1.uuid, major: $0.1.major, minor: $0.1.minor) })
    }
}
