import Foundation

/// Where the store lives, parsed from `--database`: `sqlite:PATH`, `sqlite::memory:` or
/// `postgres://user[:password]@host[:port]/database`.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    case sqliteFile(path: String)
    case sqliteMemory
    case postgres(host: String, port: Int, user: String, password: String?, database: String)

    public static let defaultLocation = DatabaseLocation.sqliteFile(path: "./proxima.sqlite")

    public init(parsing text: String) throws(ServerInputError) {
        if text == "sqlite::memory:" {
            self = .sqliteMemory
        } else if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else {
                throw ServerInputError(field: "database", reason: "expected sqlite:PATH, found an empty path")
            }
            self = .sqliteFile(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty else {
                throw ServerInputError(field: "database", reason: "expected postgres://user[:password]@host[:port]/database, found '\(text)'")
            }
            let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
            guard !database.isEmpty else {
                throw ServerInputError(field: "database", reason: "the PostgreSQL URL names no database after the host, e.g. postgres://proxima@localhost/proxima")
            }
            self = .postgres(host: host, port: url.port ?? 5432, user: url.user ?? "postgres",
                             password: url.password, database: database)
        } else {
            throw ServerInputError(field: "database",
                reason: "expected sqlite:PATH or postgres://user@host:port/database, found '\(text)'")
        }
    }

    public var description: String {
        switch self {
        case .sqliteFile(let path): "sqlite:\(path)"
        case .sqliteMemory: "sqlite::memory:"
        case .postgres(let host, let port, let user, _, let database): "postgres://\(user)@\(host):\(port)/\(database)"
        }
    }
}

/// Input from a user or a client that the server refuses, naming the field.
public struct ServerInputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var field: String
    public var reason: String
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }
    public var description: String { "\(field): \(reason)" }
}
