import Foundation
import NIOCore
import Hummingbird
import HummingbirdWebSocket

/// The per-request context: who is calling, once the bearer token was checked.
public struct ProximaRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    public var principal: Principal?
    /// The peer's IP address, which wrong tokens are throttled by ("unknown" without one).
    public let clientAddress: String
    /// The connection, for a stream that must end while its client reads nothing (StreamEnd).
    let connection: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = source.channel
        webSocket = .init()
        principal = nil
        clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// Sighting batches may be up to 5,000 sightings, about 1.2 MB of JSON.
    public var maxUploadSize: Int { 8 * 1024 * 1024 }

    /// What a route needs from its caller.
    public enum Permission: Sendable {
        case read, operate, administer, ingest
    }

    /// Refuses with 401 when no valid token came, before a route looks at what was asked.
    @discardableResult
    public func requireToken() throws -> Principal {
        guard let principal else {
            var error = APIError(.unauthorized, field: "Authorization", "expected 'Authorization: Bearer <token>' with a valid token")
            error.headers[.wwwAuthenticate] = "Bearer"
            throw error
        }
        return principal
    }

    /// Refuses with 401 when no valid token came, and 403 when the token's role lacks the right.
    @discardableResult
    public func require(_ permission: Permission) throws -> Principal {
        let principal = try requireToken()
        let allowed = switch permission {
        case .read: principal.role.canRead
        case .operate: principal.role.canOperate
        case .administer: principal.role == .admin
        case .ingest: principal.role == .gateway || principal.role == .device
        }
        guard allowed else {
            let needed = switch permission {
            case .read: "admin, operator or read-only"
            case .operate: "admin or operator"
            case .administer: "admin"
            case .ingest: "gateway or device"
            }
            throw APIError(.forbidden, field: "Authorization", "the token's role '\(principal.role.rawValue)' may not do this; it needs \(needed)")
        }
        return principal
    }
}

/// Reads `Authorization: Bearer <token>` and records the principal; routes decide what it may do.
struct AuthenticationMiddleware: RouterMiddleware {
    let store: Store
    let cache: TokenCache
    let throttle: AuthFailureThrottle

    func handle(_ request: Request, context: ProximaRequestContext, next: (Request, ProximaRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            let token = String(header.dropFirst("Bearer ".count)).trimmingCharacters(in: .whitespaces)
            if !token.isEmpty, token.utf8.count <= 200 {
                context.principal = try await check(token, from: context.clientAddress) { try await cache.principal(for: token, store: store) }
            }
        } else if let token = request.uri.queryParameters["token"], request.uri.path == ProximaServer.aprilBrotherPath {
            // April Brother gateways are configured with a URL only, so their token rides in it.
            let text = String(token)
            if !text.isEmpty, text.utf8.count <= 200 {
                context.principal = try await check(text, from: context.clientAddress) { try await cache.principal(for: text, store: store) }
            }
        } else if let token = request.uri.queryParameters["access_token"], request.uri.path.hasSuffix("/ws") {
            // Browsers cannot set headers on a WebSocket upgrade, so the event socket also takes
            // the token in the query.
            let text = String(token)
            context.principal = try await check(text, from: context.clientAddress) { try await store.authenticate(token: text) }
        }
        return try await next(request, context)
    }

    /// Looks the token up unless its address is throttled (429 naming Authorization, with
    /// Retry-After), and tells the throttle how it went.
    private func check(_ token: String, from address: String, lookUp: () async throws -> Principal?) async throws -> Principal? {
        if let wait = throttle.wait(address: address, token: token) {
            var error = APIError(.tooManyRequests, field: "Authorization",
                                 "too many requests with wrong tokens from this address; a token is looked up again in \(wait) s")
            error.headers[.retryAfter] = "\(wait)"
            throw error
        }
        let principal = try await lookUp()
        if principal == nil {
            throttle.failed(address: address)
        } else {
            throttle.succeeded(address: address, token: token)
        }
        return principal
    }
}

/// Remembers checked tokens for a short while, so a gateway posting many batches a second does
/// not cost a database lookup each. A revocation on this instance drops the entry at once; a
/// revocation by another instance cannot be seen without asking the database, so on PostgreSQL
/// (where several instances share the tokens) nothing is remembered (`lifetime` zero). An entry
/// never outlives its token's expiry.
actor TokenCache {
    private var entries: [String: (principal: Principal, expires: Duration)] = [:]
    private let lifetime: Duration
    private let time: ElapsedTime
    /// Seconds since 1970, which token expiry times are in.
    private let wallClock: @Sendable () -> Double

    /// - Parameters:
    ///   - clock: how long an entry has been remembered is measured on it.
    ///   - wallClock: token expiry times are compared with it.
    init(lifetime: Duration = .seconds(30), clock: any Clock<Duration> = ContinuousClock(),
         wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.lifetime = lifetime
        self.time = ElapsedTime(clock: clock)
        self.wallClock = wallClock
    }

    func principal(for token: String, store: Store) async throws -> Principal? {
        let now = time.now
        if let entry = entries[token], entry.expires > now { return entry.principal }
        let wallNow = wallClock()
        guard let principal = try await store.authenticate(token: token, now: wallNow) else { return nil }
        guard lifetime > .zero else { return principal }
        var expires = now + lifetime
        if let expiresAt = principal.expiresAt {
            let left = expiresAt - wallNow
            expires = min(expires, now + .milliseconds(Int64(max(0, left) * 1000)))
        }
        if entries.count > 10_000 { entries.removeAll() }
        entries[token] = (principal, expires)
        return principal
    }

    /// Drops a revoked token, so it stops working at once on this instance.
    func forget(tokenID: Int) {
        entries = entries.filter { $0.value.principal.tokenID != tokenID }
    }

    /// Drops the remembered tokens of a deleted gateway or device, so they stop working at once
    /// on this instance.
    func forget(gatewayID: String) {
        entries = entries.filter { $0.value.principal.gatewayID != gatewayID }
    }
}
