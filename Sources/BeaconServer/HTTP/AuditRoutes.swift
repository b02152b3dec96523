import Foundation
import Hummingbird

/// Records every successful change (POST, PUT, PATCH, DELETE) made with an admin or operator
/// token. It runs around the route rather than inside each store transaction, so every route is
/// covered without touching each one; a failed change (an error or a 4xx/5xx answer) is not
/// recorded, and a change whose audit write fails is answered with that error.
struct AuditMiddleware: RouterMiddleware {
    let store: Store

    func handle(_ request: Request, context: ProximaRequestContext, next: (Request, ProximaRequestContext) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        guard let principal = context.principal, principal.role.canOperate,
              [.post, .put, .patch, .delete].contains(request.method),
              (200..<300).contains(response.status.code) else { return response }
        try await store.recordAudit(principal: principal, method: request.method.rawValue, path: Self.recordedPath(request.uri.path),
                                     status: response.status.code)
        return response
    }

    /// The path as recorded. A device id is a personal identifier that must be gone once the
    /// device is deleted (issue 15 privacy), so it is replaced by `{device}`.
    static func recordedPath(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count > 3, parts[1] == "v1", parts[2] == "devices" { parts[3] = "{device}" }
        return parts.joined(separator: "/")
    }
}

extension ProximaServer {
    func addAuditRoutes(to router: Router<ProximaRequestContext>) {
        router.get("/v1/audit") { [store] request, context in
            try context.require(.administer)
            let before = try Self.optionalIntQuery(request, "before")
            if let before, before < 0 { throw APIError(.badRequest, field: "before", "expected an entry id of 0 or more, found \(before)") }
            let limit = try Self.limitQuery(request, default: 100, most: 500)
            return try Self.json(try await store.auditEntries(before: before, limit: limit))
        }
    }
}
