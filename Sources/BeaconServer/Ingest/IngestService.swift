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

/// Ingestion's persistence: loads a gateway's ``GatewayMonitor``, runs its step on a batch and
/// saves what the step returned, in one transaction. It holds no engine logic and reads the
/// time only from its injected clock.
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
    /// Positions and rooms per site, fed every accepted batch (Positions/).
    public let positions: PositionTracking
    /// Fleet health, fed every accepted batch after it is committed (Fleet/); nil when off.
    public let fleet: FleetTracking?
    /// Spoof and replay checks per site, fed every accepted batch with the server's arrival
    /// time (Security/); nil when off (`--no-security-checks`).
    public let security: SecurityTracking?
    /// Consent and messages of the day for batches posted by devices (Apps/).
    public let devices = DeviceIngestion()
    /// Rotating identities (Security/): mapped to their registered beacon before the engine
    /// sees them; replays raise an alert. Nil when the server has no secret key.
    let rotation: RotationResolver?
    let instance: String
    let clock: @Sendable () -> Double
    private let cache = Mutex<[String: Cached]>([:])
    /// How many times a monitor was read back from the database in full (for tests).
    private let fullLoadCount = Mutex(0)

    private struct Cached: Sendable {
        var version: Int
        var monitor: GatewayMonitor
    }

    public init(store: Store, instance: String, settings: GatewaySettings = GatewaySettings(),
                window: SightingTimeWindow = .default, positions: PositionTracking = PositionTracking(),
                fleet: FleetTracking? = nil, security: SecurityTracking? = nil, rotation: RotationResolver? = nil,
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.store = store
        self.security = security
        self.rotation = rotation
        self.instance = instance
        self.settings = settings
        self.window = window
        self.positions = positions
        self.fleet = fleet
        self.clock = clock
    }

    public var fullLoads: Int { fullLoadCount.withLock { $0 } }

    public func ingest(gatewayID: String, batch heard: SightingBatch) async throws -> IngestResult {
        let now = clock()
        try heard.validate(now: now, window: window)
        let translated = try await rotation?.translate(heard, now: now)
        let batch = translated?.0 ?? heard
        let replays = translated?.1 ?? []
        let device = try await devices.device(gatewayID: gatewayID, store: store)
        try devices.admit(device)
        let keepsPositions = device?.consent.positions ?? true
        // Taken out, so the step mutates it in place rather than copying it; put back after commit.
        let cached = cache.withLock { $0.removeValue(forKey: gatewayID) }
        let (result, saved) = try await store.database.transaction { db -> (IngestResult, Cached?) in
            let version = try await self.lockHeader(gatewayID: gatewayID, now: now, db: db)
            var monitor = if let cached, cached.version == version.number { cached.monitor } else {
                try await self.load(gatewayID: gatewayID, header: version.header, db: db)
            }
            let outcome = monitor.step(batch, now: now)
            if outcome.duplicate {
                return (IngestResult(accepted: 0, duplicate: true, events: []), Cached(version: version.number, monitor: monitor))
            }
            var events = try await self.storeEvents(outcome.changes, gatewayID: gatewayID, forDevice: device != nil, now: now, db: db)
            if keepsPositions {
                events += try await self.positions.step(gatewayID: gatewayID, sightings: batch.sightings, now: now, db: db)
                try await self.storeReadings(outcome.readings, gatewayID: gatewayID, db: db)
            }
            if let device {
                try await self.devices.runApplications(DeviceBatch(device: device, events: events, sightings: batch.sightings, now: now), db: db)
            }
            let rows = try await self.storeBeacons(outcome.saved, gatewayID: gatewayID, db: db)
            try await self.storeHeader(monitor.header, version: version.number + 1, sequence: batch.sequence, gatewayID: gatewayID, now: now, db: db)
            let result = IngestResult(accepted: batch.sightings.count, duplicate: false, events: events,
                                      forgottenBeacons: outcome.forgottenBeacons, untrackedSightings: outcome.untrackedSightings,
                                      beaconRowsWritten: rows)
            return (result, Cached(version: version.number + 1, monitor: monitor))
        }
        if let saved { cache.withLock { $0[gatewayID] = saved } }
        // After the commit, so a batch that failed and is sent again is observed once.
        var fed = result
        if !result.duplicate, !replays.isEmpty {
            fed.events += try await store.raiseReplayAlerts(replays, gatewayID: gatewayID, now: now)
        }
        if !result.duplicate, keepsPositions, let fleet, try await fleet.observe(gatewayID: gatewayID, sightings: batch.sightings, store: store) {
            fed.events += try await fleet.evaluate(store: store)
        }
        // A device that did not consent to positions is not followed by these checks either.
        if !result.duplicate, keepsPositions, let security {
            fed.events += try await security.observe(gatewayID: gatewayID, sightings: batch.sightings, serverTime: now, store: store)
        }
        return fed
    }

    /// An edge gateway's step results (``EdgeBatch``): stored as ``ingest(gatewayID:batch:)``
    /// stores the server's own step, with the same retry check; positions, fleet telemetry and
    /// device applications, which need the sightings themselves, do not run.
    public func ingestEdge(gatewayID: String, outcome: GatewayMonitor.StepOutcome, sequence: Int, sightings: Int) async throws -> IngestResult {
        let now = clock()
        let device = try await devices.device(gatewayID: gatewayID, store: store)
        guard device == nil else {
            throw RegistryError(.conflict, field: "Authorization", "a device's gateway posts its sightings, not edge batches: its applications need them")
        }
        let cached = cache.withLock { $0.removeValue(forKey: gatewayID) }
        let (result, saved) = try await store.database.transaction { db -> (IngestResult, Cached?) in
            let version = try await self.lockHeader(gatewayID: gatewayID, now: now, db: db)
            var monitor = if let cached, cached.version == version.number { cached.monitor } else {
                try await self.load(gatewayID: gatewayID, header: version.header, db: db)
            }
            guard monitor.admit(sequence: sequence) else {
                return (IngestResult(accepted: 0, duplicate: true, events: []), Cached(version: version.number, monitor: monitor))
            }
            let events = try await self.storeEvents(outcome.changes, gatewayID: gatewayID, forDevice: false, now: now, db: db)
            try await self.storeReadings(outcome.readings, gatewayID: gatewayID, db: db)
            try await self.storeHeader(monitor.header, version: version.number + 1, sequence: sequence, gatewayID: gatewayID, now: now, db: db)
            return (IngestResult(accepted: sightings, duplicate: false, events: events), Cached(version: version.number + 1, monitor: monitor))
        }
        if let saved { cache.withLock { $0[gatewayID] = saved } }
        return result
    }

    // MARK: The header row

    private struct Version {
        var number: Int
        var header: String
    }

    /// Reads (and on PostgreSQL locks) the gateway's header row, creating it on first use.
    private func lockHeader(gatewayID: String, now: Double, db: any SQLDatabase) async throws -> Version {
        let select = SQLQueryString("SELECT version, state FROM gateway_checkpoints WHERE gateway_id = \(bind: gatewayID)")
            + SQLQueryString(store.database.rowLockSuffix)
        if let row = try await db.raw(select).first() {
            return Version(number: try row.int("version"), header: try row.string("state"))
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
        return Version(number: try row.int("version"), header: try row.string("state"))
    }

    private func storeHeader(_ header: GatewayCheckpointHeader, version: Int, sequence: Int?, gatewayID: String, now: Double, db: any SQLDatabase) async throws {
        let state = try Self.json(header)
        let sequenceUpdate = sequence.map { SQLQueryString(", last_sequence = \(bind: $0)") } ?? ""
        try await db.raw("""
            UPDATE gateway_checkpoints SET state = \(bind: state), version = \(bind: version), updated_by = \(bind: instance),
            updated_at = \(bind: now)
            """ + sequenceUpdate + " WHERE gateway_id = \(bind: gatewayID)").run()
    }

    // MARK: Beacon rows

    private func load(gatewayID: String, header: String, db: any SQLDatabase) async throws -> GatewayMonitor {
        fullLoadCount.withLock { $0 += 1 }
        let decoder = JSONDecoder()
        let savedHeader = try decoder.decode(GatewayCheckpointHeader.self, from: Data(header.utf8))
        let rows = try await db.raw("SELECT state FROM gateway_beacons WHERE gateway_id = \(bind: gatewayID)").all()
        let beacons = try rows.map { try decoder.decode(EngineCheckpoint.Beacon.self, from: Data(try $0.string("state").utf8)) }
        return try GatewayMonitor(settings: settings, header: savedHeader, beacons: beacons)
    }

    /// Deletes forgotten beacons' rows, then upserts the changed ones; returns the rows touched.
    private func storeBeacons(_ saved: EngineChanges, gatewayID: String, db: any SQLDatabase) async throws -> Int {
        let chunk = 500
        for start in stride(from: 0, to: saved.forgotten.count, by: chunk) {
            let keys = saved.forgotten[start..<min(start + chunk, saved.forgotten.count)].map(Self.rowKey)
            try await db.delete(from: "gateway_beacons")
                .where("gateway_id", .equal, gatewayID)
                .where("identity", .in, keys)
                .run()
        }
        let encoder = JSONEncoder()
        for start in stride(from: 0, to: saved.changed.count, by: chunk) {
            var insert = db.insert(into: "gateway_beacons").columns("gateway_id", "identity", "state")
            for beacon in saved.changed[start..<min(start + chunk, saved.changed.count)] {
                insert = insert.values(gatewayID, Self.rowKey(beacon.identity), String(decoding: try encoder.encode(beacon), as: UTF8.self))
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
    private func storeEvents(_ changes: [GatewayMonitor.Change], gatewayID: String, forDevice: Bool, now: Double, db: any SQLDatabase) async throws -> [StoredEvent] {
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
            guard let inserted = try await db.raw("""
                INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at, message)
                VALUES (\(bind: gatewayID), \(bind: change.transition.rawValue), \(bind: change.identity.uuid.uuidString),
                        \(bind: Int(change.identity.major)), \(bind: Int(change.identity.minor)), \(bind: meaning?.siteID),
                        \(bind: label), \(bind: change.time), \(bind: now), \(bind: try message.map(ProximaJSON.text)))
                RETURNING id
                """).first() else { continue }
            var event = try StoredEvent(id: try inserted.int("id"), gatewayID: gatewayID, siteID: meaning?.siteID, label: label,
                                        transition: change.transition, identity: change.identity, time: change.time)
            event.message = message
            events.append(event)
        }
        return events
    }

    private func storeReadings(_ readings: [GatewayMonitor.Reading], gatewayID: String, db: any SQLDatabase) async throws {
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
