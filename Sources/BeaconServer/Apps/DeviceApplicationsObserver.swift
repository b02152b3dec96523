import SQLKit

/// The applications of a device's batch (check-ins, queues, help requests, hunts, offers), after
/// its region and room events, in the batch's transaction (``DeviceApplication``).
struct DeviceApplicationsObserver: BatchObserver {
    let devices: DeviceIngestion
    var name: String { "applications" }
    var phase: ObserverPhase { .inTransaction }

    func wants(_ batch: ObservedBatch) -> Bool { true }

    func observe(_ batch: ObservedBatch, context: ObserverContext, db: any SQLDatabase) async throws -> [StoredEvent] {
        guard let device = context.device else { return [] }
        return try await devices.runApplications(DeviceBatch(device: device, events: context.events, sightings: batch.sightings, now: batch.serverTime), db: db)
    }
}
