import BeaconGateway
import BeaconKit
import SQLKit

/// When an observer runs relative to the batch's transaction.
public enum ObserverPhase: String, Sendable, Hashable {
    /// Inside the batch's transaction: what it writes commits or rolls back with the batch, and a
    /// batch sent again is a duplicate it never sees.
    case inTransaction
    /// After the batch committed, from the batch's outbox row (``BatchOutbox``): first its work
    /// in memory, with no transaction open (``BatchObserver/prepare(_:context:)``), then what that
    /// decided to store, in a transaction of its own that also clears its mark on the row.
    /// Delivered at least once (a failure is retried), and what it stores commits exactly once.
    case afterCommit
}

/// What observers are shown of one accepted batch. After-commit observers may see it again
/// from the outbox after a failure or a restart, so it holds only what the outbox keeps.
public struct ObservedBatch: Sendable {
    public var gatewayID: String
    /// The batch's sightings with rotated identities resolved to registered ones.
    public var sightings: [Sighting]
    /// The server's clock when the batch was accepted.
    public var serverTime: Double
    /// Whether the posting gateway is a device that consented to positions (ordinary gateways do).
    public var keepsPositions: Bool
    /// Rotated identities heard outside their window (replays), kept as heard.
    var replays: [RotationReplay] = []
}

/// What the pipeline hands an observer beside the batch.
struct ObserverContext: Sendable {
    /// The registry snapshot of this batch (after commit: the current one).
    var registry: RegistrySnapshot
    /// The batch's outbox row, for after-commit observers: the key that makes a retry idempotent.
    var outboxID: Int?
    /// For in-transaction observers: the events the batch stored so far, and the posting device.
    var events: [StoredEvent] = []
    var device: Device?
}

/// One per-batch feature of the server (positions and rooms, device applications, fleet health,
/// spoof checks, replay alerts). Every one is registered in ``IngestPipeline`` at start-up; nothing
/// else in the server touches a batch.
protocol BatchObserver: Sendable {
    /// A short name, stored in the outbox row's marks: never change it for a running observer.
    var name: String { get }
    var phase: ObserverPhase { get }
    /// Whether the batch concerns this observer; an after-commit observer that answers false
    /// gets no outbox mark.
    func wants(_ batch: ObservedBatch) -> Bool
    /// In-transaction observers: handles the batch and returns the events it stored through `db`.
    func observe(_ batch: ObservedBatch, context: ObserverContext, db: any SQLDatabase) async throws -> [StoredEvent]
    /// After-commit observers: the work that needs no database (detectors in memory), done with no
    /// transaction open, so a batch's checks never hold a connection other batches wait for.
    /// Returns what to store in the observer's transaction, or nil when there is nothing to store
    /// (its mark is then cleared with no transaction of its own).
    func prepare(_ batch: ObservedBatch, context: ObserverContext) async throws -> ObserverStore?
}

/// What an after-commit observer decided to store: run in the transaction that clears its mark.
typealias ObserverStore = @Sendable (any SQLDatabase) async throws -> [StoredEvent]

extension BatchObserver {
    /// By default the whole work is in the transaction (in-transaction observers never prepare).
    func prepare(_ batch: ObservedBatch, context: ObserverContext) async throws -> ObserverStore? {
        { db in try await observe(batch, context: context, db: db) }
    }

    func observe(_ batch: ObservedBatch, context: ObserverContext, db: any SQLDatabase) async throws -> [StoredEvent] {
        guard let store = try await prepare(batch, context: context) else { return [] }
        return try await store(db)
    }
}
