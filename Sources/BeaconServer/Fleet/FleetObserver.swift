import SQLKit

/// Fleet health: every batch reports its gateway and what it heard; the checks run when a second
/// of gateway time passed, and their alert changes are stored with the observer's mark.
struct FleetObserver: BatchObserver {
    let fleet: FleetTracking
    var name: String { "fleet" }
    var phase: ObserverPhase { .afterCommit }

    /// A device that did not consent to positions is not followed by the fleet checks either.
    func wants(_ batch: ObservedBatch) -> Bool { batch.keepsPositions }

    func observe(_ batch: ObservedBatch, context: ObserverContext, db: any SQLDatabase) async throws -> [StoredEvent] {
        guard fleet.observe(gatewayID: batch.gatewayID, sightings: batch.sightings, registry: context.registry, outboxID: context.outboxID) else {
            return []
        }
        return try await fleet.evaluate(registry: context.registry, db: db)
    }
}
