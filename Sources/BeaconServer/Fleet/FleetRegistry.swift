import BeaconFleet
import BeaconKit
import Foundation
import SQLKit

/// The registry as the fleet checks see it, read in a few queries (not one per beacon).
struct FleetRegistry: Sendable {
    var beacons: [FleetBeacon] = []
    var gateways: [FleetGateway] = []
    var organisationUUIDs: Set<UUID> = []
    /// Gateway id → name and site; the server knows gateways by id, the monitor by name.
    var gatewaysByID: [String: (name: String, siteID: Int?)] = [:]
    var gatewayIDsByName: [String: String] = [:]
    var sitesByIdentity: [BeaconIdentity: Int] = [:]

    static func load(db: any SQLDatabase) async throws -> FleetRegistry {
        var registry = FleetRegistry()
        // Deployed first: an identity planned again for a replacement is judged as the deployed one.
        let rows = try await db.raw("""
            SELECT b.site_id, b.uuid, b.major, b.minor, b.x, b.y, b.measured_power, b.battery, b.installed_on, b.state,
              s.name AS site_name, z.label AS zone_label, c.name AS category_name
            FROM beacons b JOIN sites s ON s.id = b.site_id
            LEFT JOIN zones z ON z.site_id = b.site_id AND z.minor = b.minor
            LEFT JOIN categories c ON c.code = z.category
            ORDER BY CASE b.state WHEN 'deployed' THEN 0 WHEN 'planned' THEN 1 ELSE 2 END, b.id
            """).all()
        for row in rows {
            let identity = BeaconIdentity(uuid: try row.uuid("uuid"), major: try row.uint16("major"), minor: try row.uint16("minor"))
            guard registry.sitesByIdentity[identity] == nil else { continue }
            let siteID = try row.int("site_id")
            let siteName = try row.string("site_name")
            let label = switch (try row.optionalString("category_name"), try row.optionalString("zone_label")) {
            case let (category?, zone?): "\(siteName) – \(category): \(zone)"
            case let (nil, zone?): "\(siteName) – \(zone)"
            default: "\(siteName) – minor \(identity.minor)"
            }
            let power = try row.int("measured_power")
            registry.sitesByIdentity[identity] = siteID
            registry.beacons.append(FleetBeacon(
                identity: identity, label: label, siteID: siteID,
                position: Position(x: try row.double("x"), y: try row.double("y")),
                measuredPower: (-128...127).contains(power) ? Int8(power) : nil, battery: try row.string("battery"),
                installedAt: try row.optionalString("installed_on").flatMap(Self.epochSeconds),
                isFixed: true, isDeployed: try row.string("state") == BeaconState.deployed.rawValue))
        }
        for row in try await db.raw("SELECT DISTINCT uuid FROM sites").all() {
            registry.organisationUUIDs.insert(try row.uuid("uuid"))
        }
        var receiverPositions: [Int: [String: Position]] = [:]
        var mappedReceivers: [Int: Set<String>] = [:]
        for row in try await db.raw("SELECT site_id FROM site_maps").all() {
            let siteID = try row.int("site_id")
            // A map that no longer loads only loses its gateways' positions.
            guard let stored = try? await Store.siteMap(siteID: siteID, db: db) else { continue }
            mappedReceivers[siteID] = Set(stored.map.receivers.map(\.name))
            for receiver in stored.map.receivers {
                if let position = receiver.position { receiverPositions[siteID, default: [:]][receiver.name] = position }
            }
        }
        // A registered device is a phone whether or not its site has a map.
        var deviceIDs: Set<String> = []
        for row in try await db.raw("SELECT id FROM devices").all() { deviceIDs.insert(try row.string("id")) }
        for row in try await db.raw("SELECT id, name, site_id FROM gateways").all() {
            let id = try row.string("id"), name = try row.string("name"), siteID = try row.optionalInt("site_id")
            registry.gatewaysByID[id] = (name, siteID)
            registry.gatewayIDsByName[name] = id
            // A gateway without a site is compared with no site's beacons (-1 is no site id).
            // As in position tracking, a gateway that its site's map does not name is a phone:
            // it moves, so what it hears says nothing of a beacon's coverage or drift.
            let isPhone = deviceIDs.contains(id) || siteID.flatMap { mappedReceivers[$0] }.map { !$0.contains(name) } ?? false
            registry.gateways.append(FleetGateway(name: name, siteID: siteID ?? -1,
                                                  position: siteID.flatMap { receiverPositions[$0]?[name] },
                                                  isFixed: !isPhone))
        }
        return registry
    }

    /// Midnight UTC of a `yyyy-MM-dd` date, in seconds since 1970.
    static func epochSeconds(_ date: String) -> Double? {
        let parts = date.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: year, month: month, day: day))?.timeIntervalSince1970
    }
}
