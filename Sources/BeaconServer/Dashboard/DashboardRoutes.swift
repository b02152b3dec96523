import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SQLKit

extension ProximaServer {
    struct SignInRequest: Decodable {
        var code: String
    }

    struct SignedIn: Encodable {
        var token: String
        var name: String
        var role: Role
    }

    struct SessionInfo: Encodable {
        var name: String
        var role: Role
        var canOperate: Bool
    }

    struct EventCursor: Encodable {
        var lastID: Int
    }

    /// `/` and `/dashboard/…` (the operator's dashboard, docs/dashboard.md) and the three small
    /// routes it needs beside the API: the sign-in code exchange, who the token is, and the
    /// newest event id (so the events page starts from the recent events, not from the first).
    func addDashboardRoutes(to router: Router<ProximaRequestContext>) {
        let files = DashboardFiles.shared
        if let index = files.files["/dashboard/index.html"] {
            router.get("/") { _, _ in Self.dashboardResponse(index) }
        }
        for (path, file) in files.files {
            router.get(RouterPath(path)) { _, _ in Self.dashboardResponse(file) }
        }
        router.post("/v1/sign-in") { [signInCodes] request, _ in
            let body = try await Self.decode(SignInRequest.self, from: request, limit: 4096)
            guard body.code.utf8.count <= 200, let token = await signInCodes.redeem(body.code),
                  let principal = try await self.store.authenticate(token: token) else {
                throw APIError(.unauthorized, field: "code", "expected a sign-in code that was issued in the last 10 minutes and not used yet")
            }
            return try Self.json(SignedIn(token: token, name: principal.name, role: principal.role))
        }
        router.get("/v1/session") { _, context in
            let principal = try context.require(.read)
            return try Self.json(SessionInfo(name: principal.name, role: principal.role, canOperate: principal.role.canOperate))
        }
        router.get("/v1/events/cursor") { [store] _, context in
            try context.require(.read)
            let last = try await store.database.read { db in
                try await db.raw("SELECT MAX(id) AS last FROM region_events").first()?.optionalInt("last")
            }
            return try Self.json(EventCursor(lastID: last ?? 0))
        }
    }

    static func dashboardResponse(_ file: DashboardFiles.File) -> Response {
        var headers: HTTPFields = [
            .contentType: file.contentType,
            .cacheControl: "no-cache",
            .contentSecurityPolicy: DashboardFiles.contentSecurityPolicy,
        ]
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: file.contents)))
    }
}
