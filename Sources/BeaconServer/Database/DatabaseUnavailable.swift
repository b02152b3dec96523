import Foundation
import PostgresNIO
import Synchronization

/// The database cannot be reached now (PostgreSQL restarting, the network to it down). The API
/// answers 503 with Retry-After, so a gateway keeps its batch and sends it again; nothing was
/// stored, since every write runs in one transaction.
public struct DatabaseUnavailable: Error, CustomStringConvertible, Sendable {
    public var reason: String
    public var description: String { "the database is unavailable: \(reason)" }

    /// Whether an error from the driver means "unreachable" rather than "refused": a broken or
    /// refused connection, a server shutting down or starting up (SQLSTATE classes 08 and 57P).
    public static func describes(_ error: any Error) -> Bool {
        if error is DatabaseUnavailable { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57P")
        default:
            return false
        }
    }
}

/// How long a request waits for a pooled connection before the database counts as unavailable.
/// PostgresNIO's pool waits for ever while the server is down; a gateway is better told to come
/// back than left hanging. 15 s, not 5: on a loaded 2-core CI host a healthy database's pool
/// once took longer than 5 s to hand out a connection, and a busy server is not a dead one.
enum ConnectionLease {
    static let timeout: Duration = .seconds(15)

    static func withDeadline<T: Sendable>(_ timeout: Duration = ConnectionLease.timeout,
                                          _ operation: @escaping @Sendable (_ leased: @escaping @Sendable () -> Void) async throws -> T) async throws -> T {
        let leased = LeaseFlag()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation { leased.value.store(true, ordering: .relaxed) } }
            group.addTask {
                try await Task.sleep(for: timeout)
                if !leased.value.load(ordering: .relaxed) { throw DatabaseUnavailable(reason: "no connection within \(timeout)") }
                return nil
            }
            while let next = try await group.next() {
                if let value = next {
                    group.cancelAll()
                    return value
                }
            }
            throw DatabaseUnavailable(reason: "the request ended without an answer")
        }
    }
}

private final class LeaseFlag: Sendable {
    let value = Atomic<Bool>(false)
}
