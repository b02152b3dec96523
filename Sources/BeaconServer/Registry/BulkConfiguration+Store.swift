import BeaconKit
import Foundation

extension Store {
    /// Allocates identities for every position of a site plan in one transaction: either all
    /// get a zone and a planned beacon, or none does (a full group refuses the whole plan).
    public func configure(siteID: Int, plan positions: [PlannedPosition]) async throws -> [TransmitterConfiguration] {
        try await database.transaction { db in
            var configurations: [TransmitterConfiguration] = []
            for (index, position) in positions.enumerated() {
                let beacon: Beacon
                do {
                    beacon = try await Self.insertBeacon(NewBeacon(
                        siteID: siteID, category: position.category, label: position.label,
                        position: Position(x: position.x, y: position.y),
                        measuredPower: position.measuredPower ?? -59, txPower: position.txPower ?? 0,
                        battery: position.battery ?? "CR2477"), plan: NumberingPlan(), db: db)
                } catch let error as RegistryError {
                    throw RegistryError(error.kind, field: "plan[\(index)].\(error.field)", error.message)
                }
                configurations.append(TransmitterConfiguration(
                    beaconID: beacon.id, uuid: beacon.uuid, major: beacon.major, minor: beacon.minor,
                    measuredPower: beacon.measuredPower, txPower: beacon.txPower, label: position.label,
                    x: position.x, y: position.y))
            }
            return configurations
        }
    }
}
