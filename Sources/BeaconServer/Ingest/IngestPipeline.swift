import BeaconGateway
import BeaconKit
import Foundation
import SQLKit

/// The one path of a batch through the server, stage by stage. Every form enters it after its
/// own decoding; every per-batch feature is a ``BatchObserver`` registered in
/// ``IngestService/init(store:instance:settings:window:positions:fleet:security:rotation:registry:publisher:metrics:extraObservers:clock:)``.
///
/// 1. **admit**: rate limit per gateway (429) and body size (413): HTTP/IngestRoutes.swift.
/// 2. **decode**: JSON and compact sightings (`decodeBatch`), edge batches (`decodeEdgeBatch`),
///    April Brother uploads (Ingest/AprilBrotherUpload.swift), device batches (the same JSON).
/// 3. **validate**: sighting times within the server's window, bounds: ``SightingBatch/validate(now:window:)``.
/// 4. **resolve**: the registry snapshot of this batch (``RegistrySnapshots``; its generation is
///    checked in the batch's transaction), rotated identities to registered beacons
///    (``RotationResolver``), the posting device and its consent.
/// 5. **engine**: the gateway's ``GatewayMonitor`` steps (or an edge gateway's own step is taken).
/// 6. **one transaction**: the outbox rows earlier batches finished with are deleted (32 at a time); the
///    checkpoint, region events, ranging state, every in-transaction observer (positions and
///    rooms, device applications) and the outbox row (``BatchOutbox``) are written.
/// 7. **after commit**: every after-commit observer (replay alerts, fleet, security) from the
///    outbox row, each in a transaction with its mark; a failure stays for ``retryPendingObservers(before:)``.
/// 8. **publish**: counters, then ``EventPublisher`` (SSE and WebSocket wake-up, webhooks, MQTT, log).
extension IngestService {
    /// Stages 3–8 for a batch of sightings (JSON, compact, April Brother, device).
    public func ingest(gatewayID: String, batch heard: SightingBatch) async throws -> IngestResult {
        let now = clock()
        try heard.validate(now: now, window: window)
        let result = try await withRegistry { registry, checksRegistry in
            let (batch, replays) = try rotation?.translate(heard, now: now, registry: registry) ?? (heard, [])
            let device = try await devices.device(gatewayID: gatewayID, store: store)
            try devices.admit(device)
            let observed = ObservedBatch(gatewayID: gatewayID, sightings: batch.sightings, serverTime: now,
                                         keepsPositions: device?.consent.positions ?? true, replays: replays)
            return try await commit(observed, device: device, registry: registry, checksRegistry: checksRegistry, sequence: batch.sequence) { monitor in
                monitor.step(batch, now: now)
            }
        }
        return await publish(result)
    }

    /// Stages 5–8 for an edge gateway's own step results (``EdgeBatch``): no sightings, so no
    /// observer has anything to see; the same checkpoint, retry check and events.
    public func ingestEdge(gatewayID: String, outcome: GatewayMonitor.StepOutcome, sequence: Int, sightings: Int) async throws -> IngestResult {
        let now = clock()
        guard try await devices.device(gatewayID: gatewayID, store: store) == nil else {
            throw RegistryError(.conflict, field: "Authorization", "a device's gateway posts its sightings, not edge batches: its applications need them")
        }
        let observed = ObservedBatch(gatewayID: gatewayID, sightings: [], serverTime: now, keepsPositions: false)
        var result = try await withRegistry { registry, checksRegistry in
            try await commit(observed, device: nil, registry: registry, checksRegistry: checksRegistry, sequence: sequence) { monitor in
                monitor.admit(sequence: sequence) ? outcome : GatewayMonitor.StepOutcome(duplicate: true)
            }
        }
        if !result.duplicate { result.accepted = sightings }
        return await publish(result)
    }

    // MARK: 4: the registry snapshot of the batch

    /// The stored registry generation is ahead of the batch's snapshot: found in its transaction.
    private struct RegistryMoved: Error {
        var generation: Int
    }

    /// Runs a batch from stage 4 with the held registry snapshot. Its transaction reads the
    /// stored generation with the gateway's header (no statement of its own); when a registry
    /// change (here or on another instance) moved it past the snapshot, the transaction rolls
    /// back before anything is stepped, and the batch runs again on the newer snapshot. A
    /// registry changing under every attempt does not starve the batch: the third runs on what
    /// it has.
    private func withRegistry(_ attempt: (RegistrySnapshot, _ checksRegistry: Bool) async throws -> IngestResult) async throws -> IngestResult {
        var registry = try await self.registry.latest()
        var attempts = 1
        while true {
            do {
                return try await attempt(registry, attempts < 3)
            } catch let moved as RegistryMoved {
                registry = try await self.registry.current(atLeast: moved.generation)
                attempts += 1
            }
        }
    }

    // MARK: 5–7: engine, one transaction, after commit

    private func commit(_ batch: ObservedBatch, device: Device?, registry: RegistrySnapshot, checksRegistry: Bool, sequence: Int?,
                        engine: @escaping @Sendable (inout GatewayMonitor) -> GatewayMonitor.StepOutcome) async throws -> IngestResult {
        let gatewayID = batch.gatewayID, now = batch.serverTime
        let afterCommit = observers.filter { $0.phase == .afterCommit && $0.wants(batch) }
        let payload = afterCommit.isEmpty ? nil : try BatchOutbox.Payload(batch)
        // Taken out, so the step mutates it in place rather than copying it; put back after commit.
        let cached = cache.withLock { $0.removeValue(forKey: gatewayID) }
        let finished = finishedRows.take(atLeast: FinishedOutboxRows.rowsPerDelete)
        let committed: (IngestResult, CachedMonitor?, Int?)
        do {
            committed = try await store.database.transaction { db -> (IngestResult, CachedMonitor?, Int?) in
                let version = try await self.lockHeader(gatewayID: gatewayID, now: now, db: db)
                if checksRegistry, version.registryGeneration > registry.generation {
                    throw RegistryMoved(generation: version.registryGeneration)
                }
                try await BatchOutbox.delete(finished, db: db)
                var monitor = if let cached, cached.version == version.number { cached.monitor } else {
                    try await self.load(gatewayID: gatewayID, header: version.header, db: db)
                }
                let outcome = engine(&monitor)
                if outcome.duplicate {
                    return (IngestResult(accepted: 0, duplicate: true, events: []), CachedMonitor(version: version.number, monitor: monitor), nil)
                }
                var context = ObserverContext(registry: registry, device: device)
                context.events = try await self.storeEvents(outcome.changes, gatewayID: gatewayID, forDevice: device != nil, now: now, db: db)
                if batch.keepsPositions || device == nil {
                    try await self.storeReadings(outcome.readings, gatewayID: gatewayID, db: db)
                }
                for observer in self.observers where observer.phase == .inTransaction && observer.wants(batch) {
                    context.events += try await observer.observe(batch, context: context, db: db)
                }
                var outboxID: Int?
                if let payload { outboxID = try await BatchOutbox.insert(batch, payload: payload, observers: afterCommit.map(\.name), db: db) }
                let rows = try await self.storeBeacons(outcome.saved, gatewayID: gatewayID, db: db)
                try await self.storeHeader(monitor.header, version: version.number + 1, sequence: sequence, gatewayID: gatewayID, now: now, db: db)
                let result = IngestResult(accepted: batch.sightings.count, duplicate: false, events: context.events,
                                          forgottenBeacons: outcome.forgottenBeacons, untrackedSightings: outcome.untrackedSightings,
                                          beaconRowsWritten: rows)
                return (result, CachedMonitor(version: version.number + 1, monitor: monitor), outboxID)
            }
        } catch {
            finishedRows.restore(finished)
            // Nothing stepped it: the next attempt (or batch) starts from it, not a full load.
            if error is RegistryMoved, let cached { cache.withLock { $0[gatewayID] = cached } }
            throw error
        }
        let (result, saved, outboxID) = committed
        if let saved { cache.withLock { $0[gatewayID] = saved } }
        guard let outboxID else { return result }
        var fed = result
        fed.events += await runAfterCommit(outboxID, batch: batch, pending: afterCommit.map(\.name), registry: registry)
        return fed
    }

    /// Runs each pending after-commit observer of an outbox row: its work in memory first, with no
    /// transaction open, then what it decided to store in a transaction with its mark. When none
    /// failed, the row is deleted by the next batch's transaction (``FinishedOutboxRows``), not by
    /// a write of its own. A failing observer is logged and left pending; the others still run,
    /// and the marks of those with nothing to store are cleared together.
    func runAfterCommit(_ outboxID: Int, batch: ObservedBatch, pending: [String], registry: RegistrySnapshot) async -> [StoredEvent] {
        guard inFlight.withLock({ $0.insert(outboxID).inserted }) else { return [] }
        defer { _ = inFlight.withLock { $0.remove(outboxID) } }
        let context = ObserverContext(registry: registry, outboxID: outboxID)
        let lock = store.database.rowLockSuffix
        var events: [StoredEvent] = []
        var idle: [String] = []
        var failed = false
        for observer in observers where observer.phase == .afterCommit && pending.contains(observer.name) {
            do {
                guard let storing = try await observer.prepare(batch, context: context) else {
                    idle.append(observer.name)
                    continue
                }
                events += try await store.database.transaction { db in
                    guard let marks = try await BatchOutbox.pendingMarks(outboxID, observer: observer.name, lockSuffix: lock, db: db) else { return [] }
                    let stored = try await storing(db)
                    try await BatchOutbox.clear(outboxID, observer: observer.name, marks: marks, db: db)
                    return stored
                }
            } catch {
                failed = true
                observerFailed(observer.name, outboxID: outboxID, error: error)
            }
        }
        if !failed {
            // Every mark is done with: the row goes with the next write instead of in one of its own.
            finishedRows.add(outboxID)
            return events
        }
        guard !idle.isEmpty else { return events }
        do {
            try await BatchOutbox.clear(outboxID, observers: idle, database: store.database)
        } catch {
            observerFailed(idle.joined(separator: ","), outboxID: outboxID, error: error)
        }
        return events
    }

    private func observerFailed(_ name: String, outboxID: Int, error: any Error) {
        metrics?.observerFailures.increment()
        publisher?.logger.warning("an after-commit observer failed; its work stays in the outbox for a retry",
                                  metadata: ["observer": "\(name)", "outbox": "\(outboxID)", "error": "\(error)"])
    }

    /// Runs the after-commit observers still pending on outbox rows written before `time`
    /// (server clock) and publishes what they stored; returns those events. ``OutboxRetryService``
    /// calls it; tests call it directly.
    @discardableResult
    public func retryPendingObservers(before time: Double, limit: Int = 100) async throws -> [StoredEvent] {
        try await deleteFinishedRows()
        let rows = try await store.database.read { db in try await BatchOutbox.due(before: time, limit: limit, db: db) }
            .filter { !finishedRows.contains($0.id) }
        guard !rows.isEmpty else { return [] }
        let registry = try await self.registry.current()
        var events: [StoredEvent] = []
        for row in rows {
            events += await runAfterCommit(row.id, batch: row.batch, pending: row.pending, registry: registry)
        }
        await publisher?.publish(events, source: "retried")
        return events
    }

    /// Deletes the outbox rows every observer is done with that no batch has deleted yet (the
    /// retry service calls it each tick, so an idle server leaves no finished row behind).
    public func deleteFinishedRows() async throws {
        let finished = finishedRows.take()
        guard !finished.isEmpty else { return }
        do {
            try await store.database.transaction { db in try await BatchOutbox.delete(finished, db: db) }
        } catch {
            finishedRows.restore(finished)
            throw error
        }
    }

    // MARK: 8: publish

    private func publish(_ result: IngestResult) async -> IngestResult {
        if let metrics {
            if result.duplicate {
                metrics.duplicateBatches.increment()
            } else {
                metrics.batches.increment()
                metrics.sightings.increment(by: Int64(result.accepted))
                metrics.forgottenBeacons.increment(by: Int64(result.forgottenBeacons))
                metrics.untrackedSightings.increment(by: Int64(result.untrackedSightings))
            }
        }
        await publisher?.publish(result.events, source: "region")
        return result
    }
}
