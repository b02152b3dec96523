import Foundation
import SQLKit

/// Tokens that end: an optional expiry set when a token is issued, and revocation
/// (`DELETE /v1/tokens/{id}`), so a stolen gateway token can be cut off. Both are checked by the
/// database query that authenticates every request (see ``TokenCache`` for the one shortcut).
enum TokenMigrations {
    static let lifecycle = Migrations.Migration(version: 10, name: "token expiry and revocation") { _ in
        [
            "ALTER TABLE tokens ADD COLUMN expires_at DOUBLE PRECISION",
            "ALTER TABLE tokens ADD COLUMN revoked_at DOUBLE PRECISION",
        ]
    }
}

/// A token as an administrator sees it: never its secret or hash.
public struct TokenRecord: Sendable, Hashable, Codable {
    public var id: Int
    public var name: String
    public var role: Role
    public var gatewayID: String?
    public var createdAt: Double
    public var expiresAt: Double?
    public var revokedAt: Double?
}

/// A reason `proxima serve` cannot start.
struct ServeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Store {
    /// Whether a secret was ever issued, working or not.
    func isKnownToken(_ secret: String) async throws -> Bool {
        try await database.read { db in
            try await db.raw("SELECT id FROM tokens WHERE hash = \(bind: TokenHashing.hash(secret))").first() != nil
        }
    }

    /// Every token, newest first, at most `limit` after the id `before` (pages).
    public func tokens(before: Int?, limit: Int) async throws -> [TokenRecord] {
        try await database.read { db in
            try await db.raw("""
                SELECT id, name, role, gateway_id, created_at, expires_at, revoked_at FROM tokens
                WHERE id < \(bind: before ?? Int.max) ORDER BY id DESC LIMIT \(bind: limit)
                """).all().map { row in
                    TokenRecord(id: try row.int("id"), name: try row.string("name"), role: Role(rawValue: try row.string("role")) ?? .readOnly,
                                gatewayID: try row.optionalString("gateway_id"), createdAt: try row.double("created_at"),
                                expiresAt: try row.optionalDouble("expires_at"), revokedAt: try row.optionalDouble("revoked_at"))
                }
        }
    }

    /// Revokes a token from now on. The last working admin token cannot be revoked (nobody
    /// could administer the server any more); revoking one already revoked changes nothing.
    public func revokeToken(id: Int, now: Double = Date().timeIntervalSince1970) async throws -> TokenRecord {
        try await database.transaction { db in
            guard let row = try await db.raw("SELECT role, revoked_at FROM tokens WHERE id = \(bind: id)").first() else {
                throw RegistryError(.notFound, field: "id", "no token \(id)")
            }
            if try row.optionalDouble("revoked_at") == nil {
                if try row.string("role") == Role.admin.rawValue {
                    let others = try await db.raw("""
                        SELECT COUNT(*) AS n FROM tokens WHERE role = 'admin' AND id <> \(bind: id) AND revoked_at IS NULL
                          AND (expires_at IS NULL OR expires_at > \(bind: now))
                        """).first()?.int("n") ?? 0
                    guard others > 0 else {
                        throw RegistryError(.conflict, field: "id", "token \(id) is the last working admin token; issue another admin token first")
                    }
                }
                try await db.raw("UPDATE tokens SET revoked_at = \(bind: now) WHERE id = \(bind: id)").run()
            }
            guard let record = try await db.raw("""
                SELECT id, name, role, gateway_id, created_at, expires_at, revoked_at FROM tokens WHERE id = \(bind: id)
                """).first() else { throw RegistryError(.notFound, field: "id", "no token \(id)") }
            return TokenRecord(id: try record.int("id"), name: try record.string("name"), role: Role(rawValue: try record.string("role")) ?? .readOnly,
                               gatewayID: try record.optionalString("gateway_id"), createdAt: try record.double("created_at"),
                               expiresAt: try record.optionalDouble("expires_at"), revokedAt: try record.optionalDouble("revoked_at"))
        }
    }
}
