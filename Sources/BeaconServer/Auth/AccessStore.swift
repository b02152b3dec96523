import Crypto
import Foundation
import SQLKit

/// What a token may do. Each role includes the rights of those below it, except `gateway`,
/// which may only post sightings; `device`, which may post its own sightings and touch only its
/// own device's data (Apps/); and `enrolment`, which may only register devices.
public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
    case admin, `operator`, gateway, device, enrolment
    case readOnly = "read-only"

    /// Whether this role may read the registry, events and state.
    public var canRead: Bool { self == .admin || self == .operator || self == .readOnly }
    /// Whether this role may change the registry.
    public var canOperate: Bool { self == .admin || self == .operator }
}

/// Who made a request, after the token was checked.
public struct Principal: Sendable, Hashable {
    public var tokenID: Int
    public var name: String
    public var role: Role
    public var gatewayID: String?
    /// When the token stops working (seconds since 1970), if it was issued with an expiry.
    public var expiresAt: Double? = nil
}

/// A new token: the secret is shown once, here, and only its hash is stored.
public struct IssuedToken: Sendable, Hashable, Codable {
    public var id: Int
    public var name: String
    public var role: Role
    public var token: String
    public var gatewayID: String?
    public var expiresAt: Double? = nil
}

public struct Gateway: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var siteID: Int?
}

enum TokenHashing {
    /// Tokens carry 256 random bits, so one SHA-256 round is enough: there is nothing to guess.
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "px_" + text
    }
}

extension Store {
    public func issueToken(name: String, role: Role, gatewayID: String? = nil, secret: String? = nil,
                           expiresAt: Double? = nil) async throws -> IssuedToken {
        try await database.transaction { db in
            try await Self.insertToken(name: name, role: role, gatewayID: gatewayID, secret: secret, expiresAt: expiresAt, db: db)
        }
    }

    static func insertToken(name: String, role: Role, gatewayID: String?, secret: String?, expiresAt: Double? = nil,
                            db: any SQLDatabase) async throws -> IssuedToken {
        try NameText.check(name, field: "name")
        let token = secret ?? TokenHashing.generate()
        guard token.count >= 16 else {
            throw RegistryError(.invalid, field: "token", "a token must have at least 16 characters")
        }
        guard let row = try await db.raw("""
            INSERT INTO tokens (name, role, hash, gateway_id, created_at, expires_at)
            VALUES (\(bind: name), \(bind: role.rawValue), \(bind: TokenHashing.hash(token)), \(bind: gatewayID), \(bind: Date().timeIntervalSince1970),
                    \(bind: expiresAt))
            RETURNING id
            """).first() else {
            throw RegistryError(.invalid, field: "token", "the database returned no id for the new token")
        }
        return IssuedToken(id: try row.int("id"), name: name, role: role, token: token, gatewayID: gatewayID, expiresAt: expiresAt)
    }

    /// The principal a presented token stands for, or nil when it is unknown, revoked or expired.
    public func authenticate(token: String, now: Double = Date().timeIntervalSince1970) async throws -> Principal? {
        try await database.read { db in
            guard let row = try await db.raw("""
                    SELECT id, name, role, gateway_id, expires_at FROM tokens
                    WHERE hash = \(bind: TokenHashing.hash(token)) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > \(bind: now))
                    """).first(),
                  let role = Role(rawValue: try row.string("role")) else { return nil }
            return Principal(tokenID: try row.int("id"), name: try row.string("name"), role: role, gatewayID: try row.optionalString("gateway_id"),
                             expiresAt: try row.optionalDouble("expires_at"))
        }
    }

    public func hasAdminToken() async throws -> Bool {
        try await database.read { db in
            try await db.raw("SELECT id FROM tokens WHERE role = 'admin' AND revoked_at IS NULL").first() != nil
        }
    }

    /// Registers a gateway and issues its token (shown once).
    public func registerGateway(name: String, siteID: Int? = nil, id: String = UUID().uuidString.lowercased()) async throws -> (Gateway, IssuedToken) {
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw RegistryError(.invalid, field: "name", "a gateway needs a name")
        }
        try NameText.check(name, field: "name")
        return try await database.transaction { db in
            if try await db.raw("SELECT id FROM gateways WHERE name = \(bind: name)").first() != nil {
                throw RegistryError(.conflict, field: "name", "a gateway named '\(name)' already exists")
            }
            if let siteID { _ = try await Self.site(id: siteID, db: db) }
            try await db.raw("INSERT INTO gateways (id, name, site_id, created_at) VALUES (\(bind: id), \(bind: name), \(bind: siteID), \(bind: Date().timeIntervalSince1970))").run()
            let token = try await Self.insertToken(name: "gateway \(name)", role: .gateway, gatewayID: id, secret: nil, db: db)
            return (Gateway(id: id, name: name, siteID: siteID), token)
        }
    }

    public func gateways() async throws -> [Gateway] {
        try await database.read { db in
            try await db.raw("SELECT id, name, site_id FROM gateways ORDER BY name").all().map {
                Gateway(id: try $0.string("id"), name: try $0.string("name"), siteID: try $0.optionalInt("site_id"))
            }
        }
    }
}
