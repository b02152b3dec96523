import SQLKit

/// Fleet health: every batch reports its gateway and what it heard; the checks run when a second
/// of gateway time passed, and their alert changes are stored with the observer's mark.
struct FleetObserver: BatchObserver {
    let fleet: FleetTracking
    var name: String { "fleet" }
    var phase: ObserverPhase { .afterCommit }

    /// A device that did not consent to positions is not followed by the fleet checks either.
    func wants(_ batch: ObservedBatch) -> Bool { batch.keepsPositions }

    /// What the gateway heard goes into memory, and so do the checks when a second of gateway
    /// time passed; only alert changes (rare) have anything to store, so most batches need no
    /// transaction here.
    func prepare(_ batch: ObservedBatch, context: ObserverContext) async throws -> ObserverStore? {
        let due = fleet.observe(gatewayID: batch.gatewayID, sightings: batch.sightings, registry: context.registry, outboxID: context.outboxID)
        let waiting = due ? fleet.runChecks(registry: context.registry) : fleet.hasWaitingChanges
        guard waiting else { return nil }
        let fleet = fleet
        return { db in try await fleet.storeWaiting(db: db) }
    }
}
