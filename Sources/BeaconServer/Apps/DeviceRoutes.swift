import Foundation
import Hummingbird

extension ProximaRequestContext {
    /// Admins, operators and enrolment tokens may register devices.
    @discardableResult
    func requireEnrolment() throws -> Principal {
        try require(.operate, orRoles: [.admin, .operator, .enrolment], needed: "admin, operator or enrolment")
    }

    /// Operators (and admins) may touch any device; a device token only its own.
    @discardableResult
    func requireDeviceAccess(_ deviceID: String, operatorsNeed permission: Permission = .operate) throws -> Principal {
        guard let principal else { return try require(permission) }
        if principal.role == .device {
            guard principal.gatewayID == deviceID else {
                throw APIError(.forbidden, field: "id", "a device token may only touch its own device's data")
            }
            return principal
        }
        return try require(permission)
    }

    /// Like ``require(_:)``, for rules that are a list of roles rather than one permission.
    private func require(_ fallback: Permission, orRoles roles: Set<Role>, needed: String) throws -> Principal {
        guard let principal else { return try require(fallback) }
        guard roles.contains(principal.role) else {
            throw APIError(.forbidden, field: "Authorization", "the token's role '\(principal.role.rawValue)' may not do this; it needs \(needed)")
        }
        return principal
    }
}

extension ProximaServer {
    func addDeviceRoutes(to router: Router<ProximaRequestContext>) {
        router.post("/v1/devices") { [store, configuration] request, context in
            try context.requireEnrolment()
            let body = try await Self.decode(NewDevice.self, from: request, limit: 16 * 1024)
            let registered = try await store.registerDevice(body, limits: configuration.apps, now: self.clock())
            return try Self.json(registered, status: .created)
        }
        router.get("/v1/devices") { [store] request, context in
            try context.require(.operate)
            let site = try Self.optionalIntQuery(request, "site")
            let after = try Self.query(request, "after").map { try Self.deviceID($0, field: "after") }
            let limit = try Self.deviceListLimit(Self.query(request, "limit"))
            let page = try await store.devices(siteID: site, after: after, limit: limit)
            var response = try Self.json(page.devices)
            if page.more, let last = page.devices.last {
                var next = URLComponents()
                next.path = request.uri.path
                next.queryItems = (site.map { [URLQueryItem(name: "site", value: String($0))] } ?? [])
                    + [URLQueryItem(name: "after", value: last.id), URLQueryItem(name: "limit", value: String(limit))]
                response.headers[.link] = "<\(next.string ?? request.uri.path)>; rel=\"next\""
            }
            return response
        }
        router.get("/v1/devices/:id") { [store] _, context in
            let id = try Self.deviceID(context)
            try context.requireDeviceAccess(id)
            return try Self.json(try await store.device(id: id))
        }
        router.delete("/v1/devices/:id") { [store] _, context in
            let id = try Self.deviceID(context)
            try context.requireDeviceAccess(id)
            try await store.deleteDevice(id: id)
            await self.tokenCache.forget(gatewayID: id)
            await self.endStreams(ofGateway: id, reason: StreamEnd.deleted)
            // Its events are gone from the database; no live stream may read them from memory.
            await self.events.invalidate()
            return Response(status: .noContent)
        }
        router.get("/v1/devices/:id/events") { [store] request, context in
            let id = try Self.deviceID(context)
            try context.requireDeviceAccess(id, operatorsNeed: .read)
            _ = try await store.device(id: id)
            let filter = EventFilter(gatewayID: id)
            let after = try Self.startingID(request)
            let limit = try EventPage.limit(Self.query(request, "limit"))
            let accept = request.headers[.accept] ?? ""
            let follow = try Self.booleanQuery(request, "follow", default: true)
            if try accept.contains("application/json") || Self.formatQuery(request, allowed: ["json"]) == "json" {
                let page = try await store.eventPage(after: after, filter: filter, limit: limit)
                var response = try Self.json(page.events)
                if let next = page.nextAfter {
                    response.headers[.link] = "<\(Self.nextPagePath(request, after: next, limit: limit))>; rel=\"next\""
                }
                return response
            }
            return self.serverSentEvents(after: after, filter: filter, follow: follow, lease: try self.openStream(context))
        }
    }

    /// A device id is the lowercase UUID the server gave it.
    /// Every device route needs a token, so a caller without one hears 401 rather than learning
    /// how ids are checked.
    static func deviceID(_ context: ProximaRequestContext) throws -> String {
        try context.requireToken()
        return try deviceID(context.parameters.get("id") ?? "", field: "id")
    }

    static func deviceID(_ text: String, field: String) throws -> String {
        guard let uuid = UUID(uuidString: text) else {
            throw APIError(.badRequest, field: field, "expected a device id (a UUID), found '\(text.prefix(40))'")
        }
        return uuid.uuidString.lowercased()
    }

    static let deviceListMaximum = 1000

    /// `?limit=` of the device list: 1…1000, 1000 when absent.
    static func deviceListLimit(_ text: String?) throws -> Int {
        guard let text else { return deviceListMaximum }
        guard let limit = Int(text), (1...deviceListMaximum).contains(limit) else {
            throw APIError(.badRequest, field: "limit", "expected a whole number of devices in 1…\(deviceListMaximum), found '\(text.prefix(40))'")
        }
        return limit
    }

    /// An optional integer query parameter, refused naming it when present and not an integer.
    static func optionalIntQuery(_ request: Request, _ name: String) throws -> Int? {
        guard let text = query(request, name) else { return nil }
        guard let value = Int(text) else {
            throw APIError(.badRequest, field: name, "expected an integer, found '\(text.prefix(40))'")
        }
        return value
    }
}
