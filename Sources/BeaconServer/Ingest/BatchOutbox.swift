import BeaconGateway
import BeaconKit
import DequeModule
import Foundation
import NIOCore
import NIOFoundationCompat
import SQLKit
import Synchronization

/// The durable record of a batch's after-commit work: one row written in the batch's own
/// transaction, holding what after-commit observers need (the resolved sightings, replays, the
/// server's time) and one mark per observer still to run. An observer clears its mark in the
/// transaction in which it stores its events, so a failure or a crash after the batch
/// committed loses nothing (the row stays and is retried) and doubles nothing (a cleared mark is
/// never run again). The row is deleted with its last mark, or, when every observer is done with
/// it at once, by the next write (``FinishedOutboxRows``).
enum BatchOutbox {
    static let migration = Migrations.Migration(version: 20, name: "batch outbox") { dialect in
        [
            """
            CREATE TABLE batch_outbox (id \(Migrations.serialKey(dialect)), gateway_id TEXT NOT NULL,
              server_time DOUBLE PRECISION NOT NULL, keeps_positions BIGINT NOT NULL, sightings TEXT NOT NULL,
              replays TEXT NOT NULL, pending TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)
            """,
        ]
    }

    /// The sightings are base64 of a binary form, which does not compress: PostgreSQL is told
    /// not to try (its TOAST compression of each row cost more CPU than the batch's checks).
    static let uncompressedSightings = Migrations.Migration(version: 21, name: "batch outbox sightings stored uncompressed") { dialect in
        dialect == .postgres ? ["ALTER TABLE batch_outbox ALTER COLUMN sightings SET STORAGE EXTERNAL"] : []
    }

    /// The sightings' binary form in a column of bytes (`sightings` then holds only its kind), so
    /// no base64 is encoded, decoded or stored: a quarter fewer bytes written for every batch.
    static let binarySightings = Migrations.Migration(version: 22, name: "batch outbox sightings as bytes") { dialect in
        dialect == .postgres
            ? ["ALTER TABLE batch_outbox ADD COLUMN sightings_data BYTEA", "ALTER TABLE batch_outbox ALTER COLUMN sightings_data SET STORAGE EXTERNAL"]
            : ["ALTER TABLE batch_outbox ADD COLUMN sightings_data BLOB"]
    }

    /// A row read back for a retry.
    struct Row: Sendable {
        var id: Int
        var batch: ObservedBatch
        var pending: [String]
    }

    /// What a row holds of its batch, encoded before the batch's transaction opens so encoding
    /// never holds the connection other batches wait for.
    struct Payload: Sendable {
        /// `b:` when the sightings are in `data` (``OutboxSightings``); else their JSON (`j:`).
        var sightings: String
        var data: Data?
        var replays: String

        init(_ batch: ObservedBatch) throws {
            if let bytes = try? OutboxSightings.encode(batch.sightings) {
                sightings = BatchOutbox.binaryKind
                data = Data(bytes)
            } else {
                sightings = try BatchOutbox.json(batch.sightings)
            }
            replays = String(decoding: try JSONEncoder().encode(batch.replays), as: UTF8.self)
        }
    }

    /// Writes the batch's row with a mark per observer; returns its id.
    static func insert(_ batch: ObservedBatch, payload: Payload, observers: [String], db: any SQLDatabase) async throws -> Int {
        let (sightings, data, replays) = (payload.sightings, payload.data, payload.replays)
        guard let row = try await db.raw("""
            INSERT INTO batch_outbox (gateway_id, server_time, keeps_positions, sightings, sightings_data, replays, pending, created_at)
            VALUES (\(bind: batch.gatewayID), \(bind: batch.serverTime), \(bind: batch.keepsPositions ? 1 : 0), \(bind: sightings),
                    \(bind: data), \(bind: replays), \(bind: observers.joined(separator: ",")), \(bind: batch.serverTime))
            RETURNING id
            """).first() else {
            throw RegistryError(.invalid, field: "batch_outbox", "the database returned no id for the batch's outbox row")
        }
        return try row.int("id")
    }

    /// The row's marks when `observer` still has to run for it, else nil; on PostgreSQL the row is
    /// locked until the transaction ends, so two instances retrying the same row run the observer once.
    static func pendingMarks(_ id: Int, observer: String, lockSuffix: String, db: any SQLDatabase) async throws -> [String]? {
        guard let pending = try await marks(of: id, lockSuffix: lockSuffix, db: db) else { return nil }
        return pending.contains(observer) ? pending : nil
    }

    /// The row's marks, nil when the row is gone; locked as `pendingMarks` says.
    private static func marks(of id: Int, lockSuffix: String, db: any SQLDatabase) async throws -> [String]? {
        let select = SQLQueryString("SELECT pending FROM batch_outbox WHERE id = \(bind: id)") + SQLQueryString(lockSuffix)
        guard let row = try await db.raw(select).first() else { return nil }
        return marks(try row.string("pending"))
    }

    /// Clears the observer's mark from the marks just read, deleting the row with its last one.
    static func clear(_ id: Int, observer: String, marks pending: [String], db: any SQLDatabase) async throws {
        try await keep(id, marks: pending.filter { $0 != observer }, db: db)
    }

    /// Leaves the row with `left` as its marks, deleting it when none is left.
    private static func keep(_ id: Int, marks left: [String], db: any SQLDatabase) async throws {
        if left.isEmpty {
            try await db.raw("DELETE FROM batch_outbox WHERE id = \(bind: id)").run()
        } else {
            try await db.raw("UPDATE batch_outbox SET pending = \(bind: left.joined(separator: ",")) WHERE id = \(bind: id)").run()
        }
    }

    /// Clears the marks of observers that had nothing to store (when another failed, so the row stays).
    static func clear(_ id: Int, observers: [String], database: ProximaDatabase) async throws {
        let lock = database.rowLockSuffix
        try await database.transaction { db in
            guard let pending = try await marks(of: id, lockSuffix: lock, db: db) else { return }
            let left = pending.filter { !observers.contains($0) }
            guard left.count < pending.count else { return }
            try await keep(id, marks: left, db: db)
        }
    }

    /// Deletes rows every observer is done with.
    static func delete(_ ids: [Int], db: any SQLDatabase) async throws {
        guard !ids.isEmpty else { return }
        // Integers only, so they are written into the statement: one statement for any number.
        try await db.raw("DELETE FROM batch_outbox WHERE id IN (\(unsafeRaw: ids.map(String.init).joined(separator: ",")))").run()
    }

    /// The oldest rows written before `time` (server clock), at most `limit`.
    static func due(before time: Double, limit: Int, db: any SQLDatabase) async throws -> [Row] {
        let rows = try await db.raw("""
            SELECT id, gateway_id, server_time, keeps_positions, sightings, sightings_data, replays, pending FROM batch_outbox
            WHERE created_at < \(bind: time) ORDER BY id LIMIT \(bind: limit)
            """).all()
        return try rows.map { row in
            let sightings = try decode(try row.string("sightings"), data: try row.decode(column: "sightings_data", as: Data?.self))
            let batch = ObservedBatch(gatewayID: try row.string("gateway_id"), sightings: sightings,
                                      serverTime: try row.double("server_time"), keepsPositions: try row.int("keeps_positions") != 0,
                                      replays: try JSONDecoder().decode([RotationReplay].self, from: Data(try row.string("replays").utf8)))
            return Row(id: try row.int("id"), batch: batch, pending: marks(try row.string("pending")))
        }
    }

    /// Rows still waiting (for `/metrics` and tests).
    static func count(db: any SQLDatabase) async throws -> Int {
        try await db.raw("SELECT COUNT(*) AS n FROM batch_outbox").first()?.int("n") ?? 0
    }

    private static func marks(_ text: String) -> [String] {
        text.split(separator: ",").map(String.init)
    }

    // MARK: The sightings' form: ``OutboxSightings`` in `sightings_data`; rows of older versions
    // hold it in base64 (`d:`) or the compact upload form (`c:`); JSON for what it cannot carry.

    static let binaryKind = "b:"

    static func json(_ sightings: [Sighting]) throws -> String {
        "j:" + String(decoding: try JSONEncoder().encode(SightingBatch(sequence: nil, sightings: sightings)), as: UTF8.self)
    }

    static func decode(_ text: String, data: Data?) throws -> [Sighting] {
        if text == binaryKind {
            guard let data else { throw RegistryError(.invalid, field: "batch_outbox.sightings_data", "a 'b:' row without its bytes") }
            return try OutboxSightings.decode(Array(data))
        }
        let body = text.dropFirst(2)
        if text.hasPrefix("d:"), let data = Data(base64Encoded: String(body)) {
            return try OutboxSightings.decode(Array(data))
        }
        if text.hasPrefix("c:"), let data = Data(base64Encoded: String(body)) {
            return try CompactSightingBatch.decode(ByteBuffer(data: data), limits: .init(maxSightings: .max)).sightings
        }
        if text.hasPrefix("j:") {
            return try JSONDecoder().decode(SightingBatch.self, from: Data(body.utf8)).sightings
        }
        throw RegistryError(.invalid, field: "batch_outbox.sightings", "expected a 'b:', 'd:', 'c:' or 'j:' payload, found '\(text.prefix(8))'")
    }
}

/// Outbox rows whose every mark was cleared in memory, waiting to be deleted with other writes:
/// a batch's transaction deletes them once ``rowsPerDelete`` wait (one statement for many rows
/// instead of one a batch), the retry service's tick whatever waits. A row still listed here is
/// not retried; one lost to a crash before its deletion is retried after the restart, where the
/// observers' memory is new, so nothing is applied twice.
final class FinishedOutboxRows: Sendable {
    static let rowsPerDelete = 32
    private let ids = Mutex<[Int]>([])

    func add(_ id: Int) { ids.withLock { $0.append(id) } }

    func contains(_ id: Int) -> Bool { ids.withLock { $0.contains(id) } }

    /// Takes every waiting id once at least `minimum` wait (else none), for a write that deletes
    /// them; `restore` puts them back when it failed. A batch's transaction asks for ``rowsPerDelete``.
    func take(atLeast minimum: Int = 1) -> [Int] {
        ids.withLock { taken in
            guard taken.count >= minimum else { return [] }
            defer { taken.removeAll() }
            return taken
        }
    }

    func restore(_ taken: [Int]) {
        guard !taken.isEmpty else { return }
        ids.withLock { $0.append(contentsOf: taken) }
    }
}

/// The outbox rows an observer already applied to its memory, so that a row retried after its
/// store failed is not applied twice. Bounded: the oldest ids are forgotten first.
struct AppliedOutboxRows: Sendable {
    private var order = Deque<Int>()
    private var members = Set<Int>()
    let capacity: Int

    init(capacity: Int = 4_096) {
        self.capacity = capacity
    }

    /// True the first time `id` is seen (nil, a batch without a row, is always new).
    mutating func insert(_ id: Int?) -> Bool {
        guard let id else { return true }
        guard members.insert(id).inserted else { return false }
        order.append(id)
        if order.count > capacity, let oldest = order.popFirst() { members.remove(oldest) }
        return true
    }
}
