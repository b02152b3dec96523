import BeaconFleet
import BeaconKit
import BeaconSecurity
import SQLKit

/// The registry as the security detectors see it: per site, its deployed beacons at their
/// positions with their measured power, and its gateways placed by the site's map. Read with
/// the fleet's queries (``FleetRegistry``), so both see the same positions.
struct SecurityRegistry: Sendable {
    struct Gateway: Sendable {
        var name: String
        /// Nil for a gateway without a site, which no detector checks.
        var siteID: Int?
    }

    var sites: [Int: SecuritySite] = [:]
    /// Every gateway (and device) by id, so one without a site is known and does not make each
    /// of its batches read the registry again.
    var gateways: [String: Gateway] = [:]
    var gatewayIDsByName: [String: String] = [:]
    var beaconPlaces: [BeaconIdentity: (siteID: Int, label: String)] = [:]

    static func load(db: any SQLDatabase, settings: SecuritySettings) async throws -> SecurityRegistry {
        try SecurityRegistry(try await FleetRegistry.load(db: db), settings: settings)
    }

    init() {}

    init(_ fleet: FleetRegistry, settings: SecuritySettings) throws {
        var beacons: [Int: [BeaconIdentity: SecuritySite.Beacon]] = [:]
        for beacon in fleet.beacons where beacon.isDeployed {
            beaconPlaces[beacon.identity] = (beacon.siteID, beacon.label)
            beacons[beacon.siteID, default: [:]][beacon.identity] = SecuritySite.Beacon(
                name: beacon.label, position: beacon.position.map { Position3D(x: $0.x, y: $0.y) },
                measuredPower: beacon.measuredPower.map(MeasuredPower.init) ?? .appleDefault)
        }
        var receivers: [Int: [String: Position3D]] = [:]
        for gateway in fleet.gateways where gateway.siteID >= 0 {
            // Phones and gateways the map does not place are unplaced receivers (the neighbour check).
            if gateway.isFixed, let position = gateway.position {
                receivers[gateway.siteID, default: [:]][gateway.name] = Position3D(x: position.x, y: position.y)
            }
        }
        for (id, gateway) in fleet.gatewaysByID {
            gateways[id] = Gateway(name: gateway.name, siteID: gateway.siteID)
            gatewayIDsByName[gateway.name] = id
        }
        for siteID in Set(gateways.values.compactMap(\.siteID)).union(beacons.keys) {
            sites[siteID] = SecuritySite(beacons: beacons[siteID] ?? [:], receivers: receivers[siteID] ?? [:], settings: settings)
        }
    }

    /// Where an alert about `subject` belongs: its site and label, and the gateway that sent the batch.
    func place(of subject: FleetSubject, gatewayID: String) -> FleetSubjectPlace {
        switch subject {
        case .beacon(let identity):
            let known = beaconPlaces[identity]
            return FleetSubjectPlace(siteID: known?.siteID ?? gateways[gatewayID]?.siteID, label: known?.label ?? identity.description, gatewayID: gatewayID)
        case .gateway(let name):
            let id = gatewayIDsByName[name] ?? gatewayID
            return FleetSubjectPlace(siteID: gateways[id]?.siteID, label: name, gatewayID: id)
        }
    }
}
