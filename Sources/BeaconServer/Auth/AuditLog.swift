import Foundation
import SQLKit

/// The audit log's table (issue 15). No foreign key to tokens: the record of who did something
/// outlives the token's revocation.
enum AuditMigrations {
    static let auditLog = Migrations.Migration(version: 15, name: "audit log") { dialect in
        [
            """
            CREATE TABLE audit_log (id \(Migrations.serialKey(dialect)), time DOUBLE PRECISION NOT NULL, token_id BIGINT NOT NULL,
              token_name TEXT NOT NULL, role TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, status BIGINT NOT NULL)
            """,
        ]
    }
}

/// One administrative change: who (token id and name), what (method and path, which carries the
/// target's id), when, and the status it was answered with.
public struct AuditEntry: Sendable, Hashable, Codable {
    public var id: Int
    public var time: Double
    public var tokenID: Int
    public var tokenName: String
    public var role: Role
    public var method: String
    public var path: String
    public var status: Int
}

/// One page of the audit log, newest first; `next` is the `before` cursor of the following page.
public struct AuditPage: Sendable, Hashable, Codable {
    public var entries: [AuditEntry]
    public var next: Int?
}

extension Store {
    /// Longest path recorded; longer ones are cut, so one entry's size is bounded.
    static let auditPathLimit = 300

    public func recordAudit(principal: Principal, method: String, path: String, status: Int, time: Double = Date().timeIntervalSince1970) async throws {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO audit_log (time, token_id, token_name, role, method, path, status)
                VALUES (\(bind: time), \(bind: principal.tokenID), \(bind: principal.name), \(bind: principal.role.rawValue),
                        \(bind: String(method.prefix(16))), \(bind: String(path.prefix(Self.auditPathLimit))), \(bind: status))
                """).run()
        }
    }

    /// Entries with ids below `before` (all when nil), newest first, at most `limit` (1…500).
    public func auditEntries(before: Int? = nil, limit: Int = 100) async throws -> AuditPage {
        let limit = max(1, min(limit, 500))
        return try await database.read { db in
            let rows = try await db.raw("""
                SELECT id, time, token_id, token_name, role, method, path, status FROM audit_log
                WHERE id < \(bind: before ?? Int.max) ORDER BY id DESC LIMIT \(bind: limit + 1)
                """).all()
            let entries = try rows.prefix(limit).map { row in
                AuditEntry(id: try row.int("id"), time: try row.double("time"), tokenID: try row.int("token_id"),
                           tokenName: try row.string("token_name"), role: Role(rawValue: try row.string("role")) ?? .readOnly,
                           method: try row.string("method"), path: try row.string("path"), status: try row.int("status"))
            }
            return AuditPage(entries: entries, next: rows.count > limit ? entries.last?.id : nil)
        }
    }
}
