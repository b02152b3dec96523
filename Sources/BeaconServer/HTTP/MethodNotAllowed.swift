import Hummingbird

/// The paths the router serves and the methods of each, to tell "no such path" (404) from "no
/// such method on this path" (405 with `Allow`, RFC 9110 §15.5.6).
struct RouteTable: Sendable {
    struct Route: Sendable, Hashable {
        /// Path components as the router writes them: literals, and `{name}` for a capture.
        var components: [String]
        var method: HTTPRequest.Method
    }

    let routes: [Route]

    init(_ descriptions: [Router<ProximaRequestContext>.RouteDescription]) {
        routes = descriptions.map {
            Route(components: $0.path.components.map(\.description), method: $0.method)
        }
    }

    /// The methods served at a concrete request path, sorted; empty when no route matches it.
    func methods(servingPath path: Substring) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let matching = routes.filter { route in
            route.components.count == segments.count && zip(route.components, segments).allSatisfy { pattern, segment in
                (pattern.hasPrefix("{") && pattern.hasSuffix("}")) || pattern == segment
            }
        }
        return Array(Set(matching.map(\.method))).sorted { $0.rawValue < $1.rawValue }
    }
}

/// Added after every route, so it sees only the requests no route answered: on a path that is
/// served with other methods it answers 405 naming them in `Allow`, otherwise the router's 404.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = ProximaRequestContext
    let table: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let allowed = table.methods(servingPath: Substring(request.uri.path))
        guard !allowed.isEmpty else { return try await next(request, context) }
        var error = APIError(.methodNotAllowed, field: "method",
                             "expected one of \(allowed.map(\.rawValue).joined(separator: ", ")) on this path, found \(request.method.rawValue)")
        error.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
        throw error
    }
}
