import SQLKit

/// Spoof and replay checks on every sighting, with the server's arrival time (``SecurityTracking``).
struct SecurityObserver: BatchObserver {
    let security: SecurityTracking
    var name: String { "security" }
    var phase: ObserverPhase { .afterCommit }

    /// A device that did not consent to positions is not followed by these checks either.
    func wants(_ batch: ObservedBatch) -> Bool { batch.keepsPositions }

    /// The detectors run in memory; only raised alerts, or open ones gone quiet, are stored.
    func prepare(_ batch: ObservedBatch, context: ObserverContext) async throws -> ObserverStore? {
        let raised = try security.check(gatewayID: batch.gatewayID, sightings: batch.sightings, serverTime: batch.serverTime,
                                        registry: context.registry, outboxID: context.outboxID)
        guard !raised.isEmpty || security.hasQuietAlerts else { return nil }
        let (security, gatewayID) = (security, batch.gatewayID)
        return { db in try await security.store(raised: raised, gatewayID: gatewayID, db: db) }
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
