import Foundation
import Hummingbird

extension ProximaServer {
    struct TokenRequest: Decodable {
        var name: String
        var role: Role
        /// Seconds since 1970 after which the token stops working.
        var expiresAt: Double?
    }

    struct GatewayRequest: Decodable {
        var name: String
        var siteID: Int?
    }

    struct RegisteredGateway: Encodable {
        var gateway: Gateway
        /// Shown once; only its hash is stored.
        var token: String
    }

    func addAccessRoutes(to router: Router<ProximaRequestContext>) {
        router.post("/v1/tokens") { [store] request, context in
            try context.require(.administer)
            let body = try await Self.decode(TokenRequest.self, from: request)
            guard body.role != .gateway else {
                throw APIError(.unprocessableContent, field: "role", "gateway tokens come with POST /v1/gateways, which also registers the gateway")
            }
            guard body.role != .device else {
                throw APIError(.unprocessableContent, field: "role", "device tokens come with POST /v1/devices, which also registers the device")
            }
            if let expiresAt = body.expiresAt {
                guard expiresAt.isFinite, expiresAt > Date().timeIntervalSince1970 else {
                    throw APIError(.unprocessableContent, field: "expiresAt", "expected a time in the future (seconds since 1970), found \(expiresAt)")
                }
            }
            return try Self.json(try await store.issueToken(name: body.name, role: body.role, expiresAt: body.expiresAt), status: .created)
        }
        router.get("/v1/tokens") { [store] request, context in
            try context.require(.administer)
            let limit = try Self.limitQuery(request, default: 100, most: 1_000)
            let before = try Self.optionalIntQuery(request, "before")
            return try Self.json(try await store.tokens(before: before, limit: limit))
        }
        router.delete("/v1/tokens/:id") { [store] _, context in
            try context.require(.administer)
            let id = try Self.intParameter(context, "id")
            let revoked = try await store.revokeToken(id: id)
            await self.tokenCache.forget(tokenID: id)
            await self.endStreams(ofToken: id, reason: StreamEnd.revoked)
            return try Self.json(revoked)
        }
        router.post("/v1/gateways") { [store] request, context in
            try context.require(.administer)
            let body = try await Self.decode(GatewayRequest.self, from: request)
            let (gateway, token) = try await store.registerGateway(name: body.name, siteID: body.siteID)
            return try Self.json(RegisteredGateway(gateway: gateway, token: token.token), status: .created)
        }
        router.get("/v1/gateways") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.gateways())
        }
    }
}
