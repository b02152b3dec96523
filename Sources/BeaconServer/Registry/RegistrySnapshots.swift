import SQLKit
import Synchronization

/// The registry as the per-batch consumers read it (fleet, security, rotation): read in one go,
/// never changed afterwards, and labelled with the generation it was read at.
struct RegistrySnapshot: Sendable {
    let generation: Int
    let fleet: FleetRegistry
    /// Rotation keys, still sealed: only the resolver holds the secret that opens them.
    let rotations: [SealedRotation]
}

/// Holds the current ``RegistrySnapshot`` and swaps it when the stored generation
/// (``RegistryGeneration``) moves past it. Every batch asks once; every consumer is handed the
/// same snapshot and applies it if it is newer than the one it applied last.
///
/// Why an invalidation cannot be lost: the generation is read before the tables, so a snapshot
/// is never labelled newer than its rows. A write that commits while a snapshot loads leaves
/// the stored generation ahead of the snapshot's, and the next batch loads again.
final class RegistrySnapshots: Sendable {
    let store: Store
    private let held = Mutex<RegistrySnapshot?>(nil)
    /// One load at a time: batches that find the registry changed wait for the load under way.
    private let loading = AsyncMutex()
    private let loadCount = Mutex(0)
    /// Runs after the tables are read and before the snapshot is held: a write committed there
    /// is the one an invalidation flag used to lose (tests write there, on the reading connection).
    private let afterTablesRead: @Sendable (any SQLDatabase) async throws -> Void

    private let onLoad: @Sendable () -> Void

    init(store: Store, onLoad: @escaping @Sendable () -> Void = {},
         afterTablesRead: @escaping @Sendable (any SQLDatabase) async throws -> Void = { _ in }) {
        self.store = store
        self.onLoad = onLoad
        self.afterTablesRead = afterTablesRead
    }

    /// How many times the registry was read (for `/metrics` and tests).
    var loads: Int { loadCount.withLock { $0 } }

    /// The newest snapshot, read again only when the stored generation moved past the held one.
    func current() async throws -> RegistrySnapshot {
        try await current(atLeast: try await store.registryGeneration())
    }

    /// The held snapshot, with no statement of its own (loaded if none is held yet). A batch
    /// checks its generation against the stored one inside its own transaction and asks for
    /// ``current(atLeast:)`` when the registry moved on.
    func latest() async throws -> RegistrySnapshot {
        if let snapshot = held.withLock({ $0 }) { return snapshot }
        return try await current()
    }

    /// A snapshot of `generation` or newer: the held one, or one loaded now.
    func current(atLeast generation: Int) async throws -> RegistrySnapshot {
        if let snapshot = fresh(for: generation) { return snapshot }
        return try await loading.withLock { try await loadUnlessFresh(for: generation) }
    }

    private func fresh(for stored: Int) -> RegistrySnapshot? {
        held.withLock { snapshot in snapshot.flatMap { $0.generation >= stored ? $0 : nil } }
    }

    private func loadUnlessFresh(for stored: Int) async throws -> RegistrySnapshot {
        // Another batch may have loaded it while this one waited for the lock.
        if let snapshot = fresh(for: stored) { return snapshot }
        let loaded = try await store.database.read { db in
            let generation = try await RegistryGeneration.current(db: db)
            let snapshot = RegistrySnapshot(generation: generation, fleet: try await FleetRegistry.load(db: db),
                                            rotations: try await Store.sealedRotations(db: db))
            try await self.afterTablesRead(db)
            return snapshot
        }
        loadCount.withLock { $0 += 1 }
        onLoad()
        return held.withLock { snapshot in
            if let newer = snapshot, newer.generation > loaded.generation { return newer }
            snapshot = loaded
            return loaded
        }
    }
}
