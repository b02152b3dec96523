import BeaconKit
import BeaconRotation
import Foundation
import Hummingbird

extension ProximaServer {
    /// `PUT /v1/beacons/{id}/rotation`: `{"key":"<hex or base64, 16–32 bytes>","period":"24h"}`.
    /// `period` is optional (24 h) and also takes a number of seconds.
    struct RotationRequest: Decodable {
        var key: String
        var period: String?

        enum CodingKeys: String, CodingKey { case key, period }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            key = try container.decode(String.self, forKey: .key)
            if let seconds = try? container.decodeIfPresent(Int.self, forKey: .period) {
                period = String(seconds)
            } else {
                period = try container.decodeIfPresent(String.self, forKey: .period)
            }
        }
    }

    func addRotationRoutes(to router: Router<ProximaRequestContext>) {
        router.put("/v1/beacons/:id/rotation") { [store, configuration, clock] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let body = try await Self.decode(RotationRequest.self, from: request, limit: 4096)
            let key = try RotationKey(parsing: body.key, field: "key")
            var period = RotationPeriod.day
            if let text = body.period { period = try RotationPeriod(parsing: text, field: "period") }
            guard let secret = configuration.secretKey else {
                throw APIError(.conflict, field: "key",
                               "this server has no secret key to seal rotation keys with; restart it with --secret-key-file FILE (32 bytes)")
            }
            let settings = try await store.setRotation(beaconID: id, key: key, period: period, secret: secret, now: clock())
            return try Self.json(settings)
        }
        router.get("/v1/beacons/:id/rotation") { [store, clock] _, context in
            try context.require(.operate)
            return try Self.json(try await store.rotationSettings(beaconID: try Self.intParameter(context, "id"), now: clock()))
        }
        router.delete("/v1/beacons/:id/rotation") { [store] _, context in
            try context.require(.operate)
            try await store.deleteRotation(beaconID: try Self.intParameter(context, "id"))
            return Response(status: .noContent)
        }
    }

    /// `GET /v1/resolve` for a rotated identity: the registered beacon's meaning with the
    /// rotation it came through; a replay is refused (409, field `identity`).
    func resolveRotated(_ identity: BeaconIdentity) async throws -> ResolvedIdentity? {
        let now = clock()
        guard let match = try await rotation.match(identity, at: now, now: now) else { return nil }
        guard match.resolves else {
            throw APIError(.conflict, field: "identity",
                           "\(identity.major):\(identity.minor) is beacon \(match.beaconID)'s rotated identity of period \(match.period), "
                           + "outside the accepted window (\(match.window)): a replay is not resolved")
        }
        guard var resolved = try await store.resolve(match.registered) else {
            throw APIError(.notFound, field: "major", "beacon \(match.beaconID)'s registered identity \(match.registered) has no site")
        }
        resolved.rotation = match
        return resolved
    }
}
