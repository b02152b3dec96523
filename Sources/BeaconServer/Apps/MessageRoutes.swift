import BeaconKit
import Foundation
import Hummingbird

extension ProximaServer {
    /// Room for the largest HTML message with its JSON escaping and schedule.
    static let messageBodyLimit = 64 * 1024

    func addMessageRoutes(to router: Router<ProximaRequestContext>) {
        router.post("/v1/messages") { [store, configuration] request, context in
            try context.require(.operate)
            let body = try await Self.decode(NewDayMessage.self, from: request, limit: Self.messageBodyLimit)
            return try Self.json(try await store.createMessage(body, limits: configuration.apps, now: self.clock()), status: .created)
        }
        router.get("/v1/messages") { [store] request, context in
            if ["uuid", "major", "minor"].contains(where: { Self.query(request, $0) != nil }) {
                let identity = try Self.identityQuery(request)
                try await self.requireMessageLookup(identity, context: context)
                return try Self.json(try await store.messageLookup(identity, at: self.clock()))
            }
            try context.require(.read)
            return try Self.json(try await store.messages(siteID: try Self.optionalIntQuery(request, "site"),
                                                          zoneID: try Self.optionalIntQuery(request, "zone"),
                                                          beaconID: try Self.optionalIntQuery(request, "beacon")))
        }
        router.get("/v1/messages/:id") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.message(id: try Self.intParameter(context, "id")))
        }
        router.put("/v1/messages/:id") { [store, configuration] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let body = try await Self.decode(NewDayMessage.self, from: request, limit: Self.messageBodyLimit)
            return try Self.json(try await store.replaceMessage(id: id, with: body, limits: configuration.apps, now: self.clock()))
        }
        router.delete("/v1/messages/:id") { [store] _, context in
            try context.require(.operate)
            try await store.deleteMessage(id: try Self.intParameter(context, "id"))
            return Response(status: .noContent)
        }
    }

    /// Readers may look up any identity; a device only those of its own site.
    func requireMessageLookup(_ identity: BeaconIdentity, context: ProximaRequestContext) async throws {
        guard let principal = context.principal, principal.role == .device, let deviceID = principal.gatewayID else {
            try context.require(.read)
            return
        }
        let device = try await store.device(id: deviceID)
        let site = try await store.site(id: device.siteID)
        guard site.uuid == identity.uuid else {
            throw APIError(.forbidden, field: "uuid", "a device may look up the beacons of its own site only (uuid \(site.uuid.uuidString))")
        }
        guard site.major == identity.major else {
            throw APIError(.forbidden, field: "major", "a device may look up the beacons of its own site only (major \(site.major))")
        }
    }

    /// `uuid`, `major` and `minor`, all three required.
    static func identityQuery(_ request: Request) throws -> BeaconIdentity {
        guard let uuidText = query(request, "uuid") else { throw APIError(.badRequest, field: "uuid", "expected a proximity UUID, found none") }
        guard let uuid = UUID(uuidString: uuidText) else {
            throw APIError(.badRequest, field: "uuid", "expected a proximity UUID, found '\(uuidText.prefix(40))'")
        }
        func number(_ name: String) throws -> UInt16 {
            guard let text = query(request, name) else { throw APIError(.badRequest, field: name, "expected an integer in 0…65535, found none") }
            guard let value = UInt16(text) else {
                throw APIError(.badRequest, field: name, "expected an integer in 0…65535, found '\(text.prefix(40))'")
            }
            return value
        }
        return BeaconIdentity(uuid: uuid, major: try number("major"), minor: try number("minor"))
    }
}
