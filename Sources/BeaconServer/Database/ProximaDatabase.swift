import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import ServiceLifecycle
import SQLKit
import SQLiteKit
import Synchronization

/// The SQL database behind the store: one serialised SQLite connection, or a PostgreSQL pool.
/// Every statement goes through `read` or `transaction`, so each backend keeps its own
/// concurrency rules and the store's SQL is written once.
///
/// The server runs it as a service of its service group (`connect`, then `run` in the group,
/// `migrate` once running): the group starts it before the HTTP server and, on shutdown, stops
/// it after the server has drained. One-shot users (tests, benchmarks) call `open` and `close`.
public final class ProximaDatabase: Service, Sendable {
    public enum Dialect: Sendable { case sqlite, postgres }

    private enum Backend: Sendable {
        case sqlite(SQLiteConnection, AsyncMutex)
        case postgres(PostgresClient)
    }

    public let dialect: Dialect
    public let location: DatabaseLocation
    private let backend: Backend
    private let logger: Logger
    /// The pool's run loop when `open` started it outside a service group.
    private let standaloneRunner = Mutex<Task<Void, Never>?>(nil)
    let sqliteClosed = Mutex(false)
    private let migrated = Mutex(false)

    /// True once `migrate()` ran on this connection: background services wait for it, since
    /// `proxima serve` migrates after its services started.
    public var isMigrated: Bool { migrated.withLock { $0 } }

    private init(dialect: Dialect, location: DatabaseLocation, backend: Backend, logger: Logger) {
        self.dialect = dialect
        self.location = location
        self.backend = backend
        self.logger = logger
    }

    /// Opens the database for a caller without a service group: starts the PostgreSQL pool's run
    /// loop itself and runs pending migrations. Call `close()` exactly once afterwards.
    public static func open(_ location: DatabaseLocation, logger: Logger = Logger(label: "proxima.database")) async throws -> ProximaDatabase {
        let database = try await connect(location, logger: logger)
        if case .postgres(let client) = database.backend {
            database.standaloneRunner.withLock { $0 = Task { await client.run() } }
        }
        do {
            try await database.migrate()
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    /// Opens the SQLite file or makes the PostgreSQL pool, without running anything: run the
    /// result as a service, then `migrate()`.
    public static func connect(_ location: DatabaseLocation, logger: Logger = Logger(label: "proxima.database")) async throws -> ProximaDatabase {
        switch location {
        case .sqliteFile(let path):
            let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            return ProximaDatabase(dialect: .sqlite, location: location, backend: .sqlite(connection, AsyncMutex()), logger: logger)
        case .sqliteMemory:
            let connection = try await SQLiteConnection.open(storage: .memory, logger: logger)
            return ProximaDatabase(dialect: .sqlite, location: location, backend: .sqlite(connection, AsyncMutex()), logger: logger)
        case .postgres(let host, let port, let user, let password, let name):
            var configuration = PostgresClient.Configuration(host: host, port: port, username: user,
                                                             password: password, database: name, tls: .disable)
            configuration.options.maximumConnections = 8
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            return ProximaDatabase(dialect: .postgres, location: location, backend: .postgres(client), logger: logger)
        }
    }

    /// Holds the database open until the service group shuts down (or cancels), then closes
    /// it; for PostgreSQL this is the pool's run loop.
    public func run() async throws {
        switch backend {
        case .sqlite:
            try? await gracefulShutdown()
            await close()
        case .postgres(let client):
            await cancelWhenGracefulShutdown { await client.run() }
        }
    }

    /// Applies the connection settings and pending migrations; needs the database running.
    public func migrate() async throws {
        if case .sqlite = dialect {
            try await read { db in
                // WAL keeps readers off the writer's back; NORMAL sync is durable across
                // application crashes, which is what a gateway store needs.
                try await db.raw("PRAGMA journal_mode=WAL").run()
                try await db.raw("PRAGMA synchronous=NORMAL").run()
                try await db.raw("PRAGMA foreign_keys=ON").run()
                try await db.raw("PRAGMA busy_timeout=5000").run()
            }
        }
        try await Migrations.run(on: self)
        migrated.withLock { $0 = true }
    }

    /// Runs statements outside a transaction.
    public func read<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        switch backend {
        case .sqlite(let connection, let mutex):
            return try await mutex.withLock { try await body(connection.sql()) }
        case .postgres(let client):
            // The group inside waits for its children, so the body does not outlive this call.
            return try await withoutActuallyEscaping(body) { body in
                try await ConnectionLease.withDeadline { leased in
                    try await client.withConnection { connection in
                        leased()
                        return try await body(connection.sql())
                    }
                }
            }
        }
    }

    /// Whether the database answers a trivial query within `timeout`, for /health.
    public func probe(timeout: Duration = .seconds(2)) async -> String? {
        do {
            switch backend {
            case .sqlite:
                try await read { db in try await db.raw("SELECT 1").run() }
            case .postgres(let client):
                try await ConnectionLease.withDeadline(timeout) { leased in
                    try await client.withConnection { connection in
                        leased()
                        try await connection.sql().raw("SELECT 1").run()
                    }
                }
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Runs statements in one transaction: all of them take effect, or none.
    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let begin = dialect == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await read { db in
            try await db.raw(SQLQueryString(begin)).run()
            do {
                let result = try await body(db)
                try await db.raw("COMMIT").run()
                return result
            } catch {
                try? await db.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// Closes the connection, or stops the pool `open` started. sqlite-nio asserts when a
    /// connection is dropped open, so every `open` is paired with this; a second call does nothing.
    /// Whether the SQLite handle is closed (nil on PostgreSQL): for tests of `close()`.
    var sqliteHandleIsClosed: Bool? {
        if case .sqlite(let connection, _) = backend { return connection.isClosed }
        return nil
    }

    public func close() async {
        switch backend {
        case .sqlite(let connection, let mutex):
            await mutex.withLock {
                let alreadyClosed = sqliteClosed.withLock { closed in
                    defer { closed = true }
                    return closed
                }
                // The future form: the async one gives up in a cancelled task (a shutdown's),
                // leaving the handle open, and a debug build then traps in the connection's deinit.
                if !alreadyClosed { try? await connection.close().get() }
            }
        case .postgres:
            guard let runner = standaloneRunner.withLock({ $0.take() }) else { return }
            runner.cancel()
            await runner.value
        }
    }

    /// `FOR UPDATE` where the database has row locks; SQLite's single writer already serialises.
    var rowLockSuffix: String { dialect == .postgres ? " FOR UPDATE" : "" }
}
