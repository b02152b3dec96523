import SQLKit

/// Spoof and replay checks on every sighting, with the server's arrival time (``SecurityTracking``).
struct SecurityObserver: BatchObserver {
    let security: SecurityTracking
    var name: String { "security" }
    var phase: ObserverPhase { .afterCommit }

    /// A device that did not consent to positions is not followed by these checks either.
    func wants(_ batch: ObservedBatch) -> Bool { batch.keepsPositions }

    func observe(_ batch: ObservedBatch, context: ObserverContext, db: any SQLDatabase) async throws -> [StoredEvent] {
        try await security.observe(gatewayID: batch.gatewayID, sightings: batch.sightings, serverTime: batch.serverTime,
                                   registry: context.registry, outboxID: context.outboxID, db: db)
    }
}

/// Rotated identities heard outside their window: one `rotationReplay` alert per beacon.
struct ReplayAlertObserver: BatchObserver {
    var name: String { "replays" }
    var phase: ObserverPhase { .afterCommit }

    func wants(_ batch: ObservedBatch) -> Bool { !batch.replays.isEmpty }

    func observe(_ batch: ObservedBatch, context: ObserverContext, db: any SQLDatabase) async throws -> [StoredEvent] {
        try await Store.raiseReplayAlerts(batch.replays, gatewayID: batch.gatewayID, now: batch.serverTime, db: db)
    }
}
