import BeaconFleet
import BeaconKit
import Foundation
import Hummingbird

extension ProximaServer {
    func addFleetRoutes(to router: Router<ProximaRequestContext>) {
        router.get("/v1/fleet") { [store, fleet, registry] request, context in
            try context.require(.read)
            let siteID = try await Self.siteFilter(request, store: store)
            guard let fleet = fleet else { return try Self.json(FleetSummary(siteID: siteID, beacons: [], unregistered: [])) }
            fleet.apply(try await registry.current())
            let unregistered = fleet.unregistered(siteID: siteID).map { entry in
                UnregisteredIdentity(subject: FleetOccurrence.Subject(.beacon(entry.identity)).name, uuid: entry.identity.uuid,
                                  major: entry.identity.major, minor: entry.identity.minor, firstHeard: entry.firstHeard,
                                  lastHeard: entry.lastHeard, packets: entry.packets,
                                  strongestByGateway: entry.strongestByGateway.mapValues(Int.init))
            }
            return try Self.json(FleetSummary(siteID: siteID, time: fleet.now, beacons: fleet.report(siteID: siteID).map(Self.finite),
                                            unregistered: unregistered))
        }
        router.get("/v1/fleet/battery") { [fleet, registry] request, context in
            try context.require(.read)
            guard let text = Self.query(request, "beacon") else {
                throw APIError(.badRequest, field: "beacon", "expected UUID:MAJOR:MINOR of a registered beacon")
            }
            let identity: BeaconIdentity
            do {
                let region = try BeaconRegion(parsing: text)
                guard let major = region.major, let minor = region.minor else { throw RegionError(identifier: text, reason: "needs a major and a minor") }
                identity = BeaconIdentity(uuid: region.uuid, major: major, minor: minor)
            } catch {
                throw APIError(.badRequest, field: "beacon", "expected UUID:MAJOR:MINOR, found '\(text.prefix(60))'")
            }
            guard let fleet = fleet else { throw APIError(.notFound, field: "beacon", "fleet health is off on this server") }
            fleet.apply(try await registry.current())
            guard let history = fleet.batteryHistory(of: identity) else {
                throw APIError(.notFound, field: "beacon", "\(text.prefix(60)) is not a registered beacon")
            }
            var finite = history
            if let value = finite.fittedMillivolts, !value.isFinite { finite.fittedMillivolts = nil }
            if let value = finite.millivoltsPerDay, !value.isFinite { finite.millivoltsPerDay = nil }
            return try Self.json(finite)
        }
        router.get("/v1/fleet/alerts") { [store] request, context in
            try context.require(.read)
            let siteID = try await Self.siteFilter(request, store: store)
            return try Self.json(FleetAlertList(alerts: try await store.openFleetAlerts(siteID: siteID)))
        }
        router.post("/v1/fleet/alerts/:id/ack") { [store, clock] _, context in
            let principal = try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            return try Self.json(try await store.acknowledgeFleetAlert(id: id, by: principal.name, at: clock()))
        }
    }

    /// `?site=`: absent for every site; refused naming `site` when not an integer or unknown.
    static func siteFilter(_ request: Request, store: Store) async throws -> Int? {
        guard let text = query(request, "site") else { return nil }
        guard let id = Int(text) else {
            throw APIError(.badRequest, field: "site", "expected a site id (an integer), found '\(text.prefix(40))'")
        }
        do { _ = try await store.site(id: id) } catch let error as RegistryError where error.kind == .notFound {
            throw APIError(.notFound, field: "site", "no site \(id)")
        }
        return id
    }

    /// JSON has no infinity: an estimate that is not finite is left out.
    static func finite(_ row: BeaconHealth) -> BeaconHealth {
        var row = row
        if let days = row.batteryDaysLeft, !days.isFinite { row.batteryDaysLeft = nil }
        if let after = row.missingAfter, !after.isFinite { row.missingAfter = nil }
        return row
    }

    /// Runs the fleet checks if a second of gateway time passed and sends the alert events out
    /// like any batch's events. ``FleetCheckService`` calls it once a second; tests call it
    /// after moving their clock.
    @discardableResult
    public func evaluateFleet() async throws -> [StoredEvent] {
        let (fleet, security) = (self.fleet, self.security)
        guard fleet?.isEvaluationDue == true || security?.hasQuietAlerts == true else { return [] }
        let registry = try await self.registry.current()
        // The checks run in memory; a transaction only when they changed an alert or one went quiet.
        let fleetChanged = fleet?.runChecks(registry: registry) ?? false
        guard fleetChanged || security?.hasQuietAlerts == true else { return [] }
        let events = try await store.database.transaction { db in
            let fleetEvents = try await fleet?.storeWaiting(db: db) ?? []
            // Security alerts that went quiet are cleared even when no batch arrives.
            return fleetEvents + (try await security?.clearQuiet(db: db) ?? [])
        }
        await publisher.publish(events, source: "fleet")
        return events
    }
}

extension FleetTracking {
    /// Unknown identities, of one site's gateways or all.
    func unregistered(siteID: Int?) -> [UnregisteredSighting] {
        let all = unregisteredIdentities
        guard let siteID else { return all }
        let names = gatewayNames(siteID: siteID)
        return all.filter { entry in entry.strongestByGateway.keys.contains { names.contains($0) } }
    }
}

extension ServerMetrics {
    func record(_ counts: [HealthLevel: Int]) {
        for (level, gauge) in beaconStates { gauge.set(Int64(counts[level] ?? 0)) }
    }
}
