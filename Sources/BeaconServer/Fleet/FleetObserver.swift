import SQLKit

/// Fleet health: every batch reports its gateway and what it heard; the checks run when a second
/// of gateway time passed, and their alert changes are stored with the observer's mark.
struct FleetObserver: BatchObserver {
    let fleet: FleetTracking
    var name: String { "fleet" }
    var phase: ObserverPhase { .afterCommit }

    /// A device that did not consent to positions is not followed by the fleet checks either.
    func wants(_ batch: ObservedBatch) -> Bool { batch.keepsPositions }

    /// What the gateway heard goes into memory; only a due evaluation (once a second of gateway
    /// time) has anything to store.
    func prepare(_ batch: ObservedBatch, context: ObserverContext) async throws -> ObserverStore? {
        guard fleet.observe(gatewayID: batch.gatewayID, sightings: batch.sightings, registry: context.registry, outboxID: context.outboxID) else {
            return nil
        }
        let (fleet, registry) = (fleet, context.registry)
        return { db in try await fleet.evaluate(registry: registry, db: db) }
    }
}
