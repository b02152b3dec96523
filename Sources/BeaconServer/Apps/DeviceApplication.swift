import BeaconKit
import Foundation
import SQLKit

/// An application built on a device's events (check-ins, queues, help requests, treasure hunts,
/// offers). Ingestion calls every registered application inside the batch's transaction, after
/// the device's events are stored, so what an application writes commits or rolls back with the
/// batch: a batch sent again is a duplicate the engine recognises, and no application sees it
/// twice.
public protocol DeviceApplication: Sendable {
    /// Reacts to one accepted batch of a device. `events` are the device's stored events of this
    /// batch (region enters and exits, then room events when the device consented to positions);
    /// `sightings` are the batch's own, on the gateway clock. Returns the events it stored
    /// (``ApplicationOccurrence``), which the pipeline publishes with the batch's.
    func observe(_ batch: DeviceBatch, db: any SQLDatabase) async throws -> [StoredEvent]
}

/// What an application is shown of one accepted device batch.
public struct DeviceBatch: Sendable {
    public var device: Device
    public var events: [StoredEvent]
    public var sightings: [Sighting]
    /// The server's clock when the batch was accepted.
    public var now: Double
}

extension DeviceIngestion {
    /// The applications every server runs, in the order they are called.
    public static func standardApplications() -> [any DeviceApplication] {
        [
            CheckinApplication(), QueueApplication(),
            HelpRequestApplication(),
            HuntApplication(),
            OfferApplication(),
        ]
    }

    func runApplications(_ batch: DeviceBatch, db: any SQLDatabase) async throws -> [StoredEvent] {
        var events: [StoredEvent] = []
        for application in applications {
            events += try await application.observe(batch, db: db)
        }
        return events
    }
}
