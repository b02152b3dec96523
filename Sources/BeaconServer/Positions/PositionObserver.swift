import SQLKit

/// Positions and rooms: each batch through its site's tracker, room changes stored with the batch.
struct PositionObserver: BatchObserver {
    let positions: PositionTracking
    var name: String { "positions" }
    var phase: ObserverPhase { .inTransaction }

    func wants(_ batch: ObservedBatch) -> Bool { batch.keepsPositions }

    func observe(_ batch: ObservedBatch, context: ObserverContext, db: any SQLDatabase) async throws -> [StoredEvent] {
        try await positions.step(gatewayID: batch.gatewayID, sightings: batch.sightings, now: batch.serverTime, db: db)
    }
}
