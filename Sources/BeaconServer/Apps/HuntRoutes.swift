import Foundation
import Hummingbird

extension ProximaServer {
    func addHuntRoutes(to router: Router<ProximaRequestContext>) {
        router.post("/v1/hunts") { [store] request, context in
            try context.require(.operate)
            let body = try await Self.decode(NewHunt.self, from: request, limit: 16 * 1024)
            return try Self.json(try await store.createHunt(body, now: self.clock()), status: .created)
        }
        router.get("/v1/hunts") { [store] request, context in
            let site = try Self.optionalIntQuery(request, "site")
            if let deviceSite = try await self.deviceSite(context) {
                guard site == nil || site == deviceSite else {
                    throw APIError(.forbidden, field: "site", "a device may list the hunts of its own site (\(deviceSite)) only")
                }
                return try Self.json(try await store.hunts(siteID: deviceSite))
            }
            try context.require(.read)
            return try Self.json(try await store.hunts(siteID: site))
        }
        router.get("/v1/hunts/:id") { _, context in
            try Self.json(try await self.readableHunt(context))
        }
        router.delete("/v1/hunts/:id") { [store] _, context in
            try context.require(.operate)
            try await store.deleteHunt(id: try Self.intParameter(context, "id"))
            return Response(status: .noContent)
        }
        router.get("/v1/hunts/:id/leaderboard") { [store] request, context in
            let hunt = try await self.readableHunt(context)
            let limit = try Self.limitQuery(request, default: 100, most: HuntLimits().leaderboardLength)
            var board = try await store.huntLeaderboard(huntID: hunt.id, limit: limit)
            // Other people's names are for staff; a device sees its own name only.
            if let principal = context.principal, principal.role == .device {
                for index in board.leaders.indices where board.leaders[index].deviceID != principal.gatewayID {
                    board.leaders[index].name = nil
                }
            }
            return try Self.json(board)
        }
        router.get("/v1/hunts/:id/runs") { [store] request, context in
            try context.require(.read)
            let id = try Self.intParameter(context, "id")
            let status = try Self.query(request, "status").map { text in
                guard let status = HuntRun.Status(rawValue: text) else {
                    throw APIError(.badRequest, field: "status", "expected one of \(HuntRun.Status.allCases.map(\.rawValue).joined(separator: ", ")), found '\(text.prefix(40))'")
                }
                return status
            }
            let limit = try Self.limitQuery(request, default: 100, most: 1_000)
            return try Self.json(try await store.huntRuns(huntID: id, status: status, limit: limit))
        }
        router.get("/v1/devices/:id/hunts") { [store] _, context in
            let id = try Self.deviceID(context)
            try context.requireDeviceAccess(id, operatorsNeed: .read)
            _ = try await store.device(id: id)
            return try Self.json(try await store.huntRuns(deviceID: id))
        }
    }

    /// The site of the device behind a device token; nil for other roles.
    func deviceSite(_ context: ProximaRequestContext) async throws -> Int? {
        guard let principal = context.principal, principal.role == .device, let deviceID = principal.gatewayID else { return nil }
        return try await store.device(id: deviceID).siteID
    }

    /// The hunt of the path's `id` for a read role or a device of its site. The caller's right to
    /// read hunts at all is checked before the lookup, and a device asking for another site's
    /// hunt gets the answer a missing one gets, so no answer tells whether a hunt exists.
    func readableHunt(_ context: ProximaRequestContext) async throws -> Hunt {
        let id = try Self.intParameter(context, "id")
        let deviceSite = try await deviceSite(context)
        if deviceSite == nil { try context.require(.read) }
        let hunt = try await store.hunt(id: id)
        if let deviceSite, deviceSite != hunt.siteID {
            throw Store.noHunt(id)
        }
        return hunt
    }

    /// `limit`: an integer in 1…most, `default` when absent.
    static func limitQuery(_ request: Request, default value: Int, most: Int) throws -> Int {
        guard let limit = try optionalIntQuery(request, "limit") else { return value }
        guard (1...most).contains(limit) else {
            throw APIError(.badRequest, field: "limit", "expected an integer in 1…\(most), found \(limit)")
        }
        return limit
    }
}
