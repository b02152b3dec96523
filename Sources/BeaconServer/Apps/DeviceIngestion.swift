import BeaconKit
import Foundation
import SQLKit
import Synchronization

/// What ingestion does differently when the "gateway" posting a batch is a registered device:
/// it holds the device to its consent (no events consent: the batch is refused; no positions
/// consent: no ranging state, positions or room events are kept); storing its events attaches the
/// message of the day to its enters (IngestService.storeEvents). Everything else (engine,
/// checkpoints, sequences, events) is the gateway path unchanged, since a device is a gateway
/// record with a device row beside it.
public final class DeviceIngestion: Sendable {
    /// Ids known not to be devices. Gateway ids are never reused for a device (a device gets a
    /// fresh id when it registers), so a "no" stays true; a "yes" is read again every batch,
    /// so a deleted device or a changed consent takes effect at once.
    private let notDevices = Mutex(Set<String>())
    static let notDevicesLimit = 100_000
    let applications: [any DeviceApplication]

    public init(applications: [any DeviceApplication] = DeviceIngestion.standardApplications()) {
        self.applications = applications
    }

    /// The device behind a gateway id, nil for an ordinary gateway.
    func device(gatewayID: String, store: Store) async throws -> Device? {
        if notDevices.withLock({ $0.contains(gatewayID) }) { return nil }
        let (device, gatewayExists) = try await store.database.read { db in
            let device = try await Store.device(id: gatewayID, db: db)
            let gateway = device != nil ? true : try await db.raw("SELECT id FROM gateways WHERE id = \(bind: gatewayID)").first() != nil
            return (device, gateway)
        }
        // A token outliving its deleted device (another instance's token cache) is refused here
        // rather than failing on the missing gateway record.
        guard gatewayExists else {
            throw APIError(.unauthorized, field: "Authorization", "the device or gateway this token was issued to has been deleted")
        }
        if device == nil {
            notDevices.withLock { known in
                if known.count >= Self.notDevicesLimit { known.removeAll() }
                known.insert(gatewayID)
            }
        }
        return device
    }

    /// Refuses a batch from a device that did not consent to events.
    func admit(_ device: Device?) throws {
        guard let device, !device.consent.events else { return }
        throw APIError(.forbidden, field: "consent.events",
                       "device \(device.id) did not consent to events, so the server keeps none of its sightings; register again with consent.events true")
    }
}
