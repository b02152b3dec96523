import BeaconGateway
import BeaconKit
import Foundation
import SQLKit
import Synchronization

/// What one batch did.
public struct IngestResult: Sendable, Hashable, Codable {
    public var accepted: Int
    public var duplicate: Bool
    public var events: [StoredEvent]
    /// Beacons the gateway's engine forgot to stay within its limit or because they fell silent.
    public var forgottenBeacons = 0
    /// Sightings of new beacons dropped because the gateway's engine was full of present ones.
    public var untrackedSightings = 0
    /// Beacon checkpoint rows written or deleted: those the batch touched.
    public var beaconRowsWritten = 0
}

/// The server's ingestion: the pipeline every batch takes (its stages are listed in order in
/// IngestPipeline.swift), with what it keeps between batches: each gateway's ``GatewayMonitor``,
/// the registry snapshot and the observers registered at start-up. It reads the time only from
/// its injected clock.
///
/// Each gateway's checkpoint is a header row (`gateway_checkpoints`: engine clock, recent
/// sequences, a version counted up per batch) and one row per beacon (`gateway_beacons`). A
/// batch writes the header and the rows of the beacons it touched. The monitor stays in memory
/// between batches; another instance (or this one after a restart) finds the stored version
/// ahead of its copy and reads the rows again. The header row is locked on PostgreSQL, so two
/// instances take a gateway's batches one at a time.
public final class IngestService: Sendable {
    public let store: Store
    public let settings: GatewaySettings
    public let window: SightingTimeWindow
    /// Positions and rooms per site (Positions/); fed by ``PositionObserver``.
    public let positions: PositionTracking
    /// Fleet health (Fleet/), fed by ``FleetObserver`` after commit; nil when off.
    public let fleet: FleetTracking?
    /// Spoof and replay checks per site (Security/), fed by ``SecurityObserver`` after commit; nil
    /// when off (`--no-security-checks`).
    public let security: SecurityTracking?
    /// Consent and the applications of batches posted by devices (Apps/).
    public let devices = DeviceIngestion()
    /// Rotating identities (Security/): mapped to their registered beacon before the engine
    /// sees them. Nil when the server has no secret key.
    let rotation: RotationResolver?
    /// The registry every per-batch consumer reads, one snapshot per batch.
    let registry: RegistrySnapshots
    /// Every per-batch feature, in the order it runs within its phase.
    let observers: [any BatchObserver]
    /// Where the pipeline's events go out; nil for a pipeline without feeds (unit tests).
    let publisher: EventPublisher?
    let metrics: ServerMetrics?
    let instance: String
    let clock: @Sendable () -> Double
    let cache = Mutex<[String: CachedMonitor]>([:])
    /// Outbox rows whose after-commit work runs now on this instance, so the retry leaves them be.
    let inFlight = Mutex(Set<Int>())
    /// Outbox rows every observer is done with, deleted in the next batch's transaction (or by
    /// the retry service's next tick, whichever comes first) rather than in a write of their own.
    let finishedRows = FinishedOutboxRows()
    /// How many times a monitor was read back from the database in full (for tests).
    let fullLoadCount = Mutex(0)

    struct CachedMonitor: Sendable {
        var version: Int
        var monitor: GatewayMonitor
    }

    public convenience init(store: Store, instance: String, settings: GatewaySettings = GatewaySettings(),
                            window: SightingTimeWindow = .default, positions: PositionTracking = PositionTracking(),
                            fleet: FleetTracking? = nil, security: SecurityTracking? = nil,
                            clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        let registry = RegistrySnapshots(store: store)
        self.init(store: store, instance: instance, settings: settings, window: window, positions: positions, fleet: fleet,
                  security: security, rotation: nil, registry: registry, publisher: nil, metrics: nil, clock: clock)
    }

    init(store: Store, instance: String, settings: GatewaySettings, window: SightingTimeWindow, positions: PositionTracking,
         fleet: FleetTracking?, security: SecurityTracking?, rotation: RotationResolver?, registry: RegistrySnapshots,
         publisher: EventPublisher?, metrics: ServerMetrics?, extraObservers: [any BatchObserver] = [],
         clock: @escaping @Sendable () -> Double) {
        self.store = store
        self.registry = registry
        self.security = security
        self.rotation = rotation
        self.instance = instance
        self.settings = settings
        self.window = window
        self.positions = positions
        self.fleet = fleet
        self.publisher = publisher
        self.metrics = metrics
        self.clock = clock
        var observers: [any BatchObserver] = [PositionObserver(positions: positions), DeviceApplicationsObserver(devices: devices)]
        observers.append(ReplayAlertObserver())
        if let fleet { observers.append(FleetObserver(fleet: fleet)) }
        if let security { observers.append(SecurityObserver(security: security)) }
        self.observers = observers + extraObservers
    }

    public var fullLoads: Int { fullLoadCount.withLock { $0 } }

    // MARK: The header row

    struct Version {
        var number: Int
        var header: String
        /// The stored registry generation, read with the header: no statement of its own.
        var registryGeneration: Int
    }

    /// Reads (and on PostgreSQL locks) the gateway's header row, creating it on first use.
    func lockHeader(gatewayID: String, now: Double, db: any SQLDatabase) async throws -> Version {
        let select = SQLQueryString("SELECT version, state, (\(unsafeRaw: RegistryGeneration.valueQuery)) AS registry_generation ")
            + SQLQueryString("FROM gateway_checkpoints WHERE gateway_id = \(bind: gatewayID)") + SQLQueryString(store.database.rowLockSuffix)
        if let row = try await db.raw(select).first() {
            return try Self.version(row)
        }
        let initial = try Self.json(GatewayMonitor(settings: settings).header)
        try await db.raw("""
            INSERT INTO gateway_checkpoints (gateway_id, last_sequence, state, version, updated_by, updated_at)
            VALUES (\(bind: gatewayID), \(bind: -1), \(bind: initial), \(bind: 0), \(bind: instance), \(bind: now))
            ON CONFLICT (gateway_id) DO NOTHING
            """).run()
        guard let row = try await db.raw(select).first() else {
            throw RegistryError(.notFound, field: "gateway", "no checkpoint for gateway \(gatewayID)")
        }
        return try Self.version(row)
    }

    private static func version(_ row: any SQLRow) throws -> Version {
        guard let generation = try row.decode(column: "registry_generation", as: Int?.self) else { throw RegistryGeneration.missingRow }
        return Version(number: try row.int("version"), header: try row.string("state"), registryGeneration: generation)
    }

    func storeHeader(_ header: GatewayCheckpointHeader, version: Int, sequence: Int?, gatewayID: String, now: Double, db: any SQLDatabase) async throws {
        let state = try Self.json(header)
        let sequenceUpdate = sequence.map { SQLQueryString(", last_sequence = \(bind: $0)") } ?? ""
        try await db.raw("""
            UPDATE gateway_checkpoints SET state = \(bind: state), version = \(bind: version), updated_by = \(bind: instance),
            updated_at = \(bind: now)
            """ + sequenceUpdate + " WHERE gateway_id = \(bind: gatewayID)").run()
    }

    // MARK: Beacon rows

    func load(gatewayID: String, header: String, db: any SQLDatabase) async throws -> GatewayMonitor {
        fullLoadCount.withLock { $0 += 1 }
        let decoder = JSONDecoder()
        let savedHeader = try decoder.decode(GatewayCheckpointHeader.self, from: Data(header.utf8))
        let rows = try await db.raw("SELECT state FROM gateway_beacons WHERE gateway_id = \(bind: gatewayID)").all()
        let beacons = try rows.map { try decoder.decode(EngineCheckpoint.Beacon.self, from: Data(try $0.string("state").utf8)) }
        return try GatewayMonitor(settings: settings, header: savedHeader, beacons: beacons)
    }

    /// Deletes forgotten beacons' rows, then upserts the changed ones; returns the rows touched.
    func storeBeacons(_ saved: EngineChanges, gatewayID: String, db: any SQLDatabase) async throws -> Int {
        let chunk = 500
        for start in stride(from: 0, to: saved.forgotten.count, by: chunk) {
            let keys = saved.forgotten[start..<min(start + chunk, saved.forgotten.count)].map(Self.rowKey)
            try await db.delete(from: "gateway_beacons")
                .where("gateway_id", .equal, gatewayID)
                .where("identity", .in, keys)
                .run()
        }
        for start in stride(from: 0, to: saved.changed.count, by: chunk) {
            var insert = db.insert(into: "gateway_beacons").columns("gateway_id", "identity", "state")
            for beacon in saved.changed[start..<min(start + chunk, saved.changed.count)] {
                insert = insert.values(gatewayID, Self.rowKey(beacon.identity), try beacon.jsonText())
            }
            try await insert.onConflict(with: ["gateway_id", "identity"]) { $0.set(excludedValueOf: "state") }.run()
        }
        return saved.forgotten.count + saved.changed.count
    }

    static func rowKey(_ identity: BeaconIdentity) -> String {
        "\(identity.uuid.uuidString):\(identity.major):\(identity.minor)"
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    // MARK: Events and ranging

    /// Turns the step's enters and exits into stored events: the one place the server's event
    /// form is made from the engine's.
    /// A device's enter events carry the message of the day that applies now (Apps/), stored
    /// with the row so every feed and a later read show the same one.
    func storeEvents(_ changes: [GatewayMonitor.Change], gatewayID: String, forDevice: Bool, now: Double, db: any SQLDatabase) async throws -> [StoredEvent] {
        var events: [StoredEvent] = []
        var resolved: [BeaconIdentity: ResolvedIdentity?] = [:]
        var messages: [BeaconIdentity: DeliveredMessage?] = [:]
        for change in changes {
            if resolved[change.identity] == nil {
                // Awaited into a local first, so no dictionary access is open across the suspension.
                let found = try await Store.resolve(change.identity, db: db)
                resolved[change.identity] = .some(found)
            }
            let meaning = resolved[change.identity] ?? nil
            let label = meaning?.label ?? change.identity.description
            var message: DeliveredMessage?
            if forDevice, change.transition == .enter {
                if messages[change.identity] == nil {
                    let current = try await Store.currentMessage(for: change.identity, at: now, db: db)?.delivered
                    messages[change.identity] = .some(current)
                }
                message = messages[change.identity] ?? nil
            }
            let row = EventRow(gatewayID: gatewayID, kind: change.transition.rawValue, identity: change.identity, siteID: meaning?.siteID,
                               label: label, time: change.time, recordedAt: now, message: try message.map(ProximaJSON.text))
            guard let id = try await row.insert(db: db) else { continue }
            var event = try StoredEvent(id: id, gatewayID: gatewayID, siteID: meaning?.siteID, label: label,
                                        transition: change.transition, identity: change.identity, time: change.time)
            event.message = message
            events.append(event)
        }
        return events
    }

    func storeReadings(_ readings: [GatewayMonitor.Reading], gatewayID: String, db: any SQLDatabase) async throws {
        guard !readings.isEmpty else { return }
        var insert = db.insert(into: "ranging_state")
            .columns("gateway_id", "uuid", "major", "minor", "rssi", "distance", "proximity", "time")
        for reading in readings {
            insert = insert.values(gatewayID, reading.identity.uuid.uuidString, Int(reading.identity.major), Int(reading.identity.minor),
                                   reading.rssi, reading.distance, reading.proximity, reading.time)
        }
        try await insert.onConflict(with: ["gateway_id", "uuid", "major", "minor"]) { update in
            update.set(excludedValueOf: "rssi").set(excludedValueOf: "distance")
                .set(excludedValueOf: "proximity").set(excludedValueOf: "time")
        }.run()
    }
}

extension Store {
    /// Which instance last moved a gateway's checkpoint, and its latest sequence (for operators and tests).
    public func checkpoint(gatewayID: String) async throws -> (sequence: Int, updatedBy: String)? {
        try await database.read { db in
            guard let row = try await db.raw("SELECT last_sequence, updated_by FROM gateway_checkpoints WHERE gateway_id = \(bind: gatewayID)").first() else {
                return nil
            }
            return (try row.int("last_sequence"), try row.string("updated_by"))
        }
    }
}
