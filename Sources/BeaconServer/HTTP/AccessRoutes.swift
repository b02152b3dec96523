import Foundation
import Hummingbird

extension ProximaServer {
    struct TokenRequest: Decodable {
        var name: String
        var role: Role
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
            return try Self.json(try await store.issueToken(name: body.name, role: body.role), status: .created)
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
