import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit

/// The SQL database behind the store: one serialised SQLite connection, or a PostgreSQL pool.
/// Every statement goes through `read` or `transaction`, so each backend keeps its own
/// concurrency rules and the store's SQL is written once.
public final class ProximaDatabase: Sendable {
    public enum Dialect: Sendable { case sqlite, postgres }

    private enum Backend: Sendable {
        case sqlite(SQLiteConnection, AsyncMutex)
        case postgres(PostgresClient, Task<Void, Never>)
    }

    public let dialect: Dialect
    public let location: DatabaseLocation
    private let backend: Backend
    private let logger: Logger

    private init(dialect: Dialect, location: DatabaseLocation, backend: Backend, logger: Logger) {
        self.dialect = dialect
        self.location = location
        self.backend = backend
        self.logger = logger
    }

    /// Opens the database and runs pending migrations.
    public static func open(_ location: DatabaseLocation, logger: Logger = Logger(label: "proxima.database")) async throws -> ProximaDatabase {
        let database: ProximaDatabase
        switch location {
        case .sqliteFile(let path):
            let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            database = ProximaDatabase(dialect: .sqlite, location: location, backend: .sqlite(connection, AsyncMutex()), logger: logger)
        case .sqliteMemory:
            let connection = try await SQLiteConnection.open(storage: .memory, logger: logger)
            database = ProximaDatabase(dialect: .sqlite, location: location, backend: .sqlite(connection, AsyncMutex()), logger: logger)
        case .postgres(let host, let port, let user, let password, let name):
            var configuration = PostgresClient.Configuration(host: host, port: port, username: user,
                                                             password: password, database: name, tls: .disable)
            configuration.options.maximumConnections = 8
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            let runner = Task { await client.run() }
            database = ProximaDatabase(dialect: .postgres, location: location, backend: .postgres(client, runner), logger: logger)
        }
        do {
            if case .sqlite = database.dialect {
                try await database.read { db in
                    // WAL keeps readers off the writer's back; NORMAL sync is durable across
                    // application crashes, which is what a gateway store needs.
                    try await db.raw("PRAGMA journal_mode=WAL").run()
                    try await db.raw("PRAGMA synchronous=NORMAL").run()
                    try await db.raw("PRAGMA foreign_keys=ON").run()
                    try await db.raw("PRAGMA busy_timeout=5000").run()
                }
            }
            try await Migrations.run(on: database)
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    /// Runs statements outside a transaction.
    public func read<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        switch backend {
        case .sqlite(let connection, let mutex):
            await mutex.lock()
            do {
                let result = try await body(connection.sql())
                await mutex.unlock()
                return result
            } catch {
                await mutex.unlock()
                throw error
            }
        case .postgres(let client, _):
            return try await client.withConnection { connection in
                try await body(connection.sql())
            }
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

    /// Closes the connection or pool. sqlite-nio asserts when a connection is dropped open, so
    /// every owner calls this exactly once.
    public func close() async {
        switch backend {
        case .sqlite(let connection, let mutex):
            await mutex.lock()
            try? await connection.close()
            await mutex.unlock()
        case .postgres(_, let runner):
            runner.cancel()
            await runner.value
        }
    }

    /// `FOR UPDATE` where the database has row locks; SQLite's single writer already serialises.
    var rowLockSuffix: String { dialect == .postgres ? " FOR UPDATE" : "" }
}
