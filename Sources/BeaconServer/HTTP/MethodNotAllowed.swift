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
    /// As the router's trie resolves a path, a literal segment wins over a capture at the first
    /// place they differ, with no going back: `DELETE …/survey-recordings/save` is not
    /// `DELETE …/survey-recordings/{recording}`, because the literal `save` of the POST route
    /// is taken first.
    func methods(servingPath path: Substring) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let matching = routes.compactMap { route -> (literals: [Bool], method: HTTPRequest.Method)? in
            guard route.components.count == segments.count else { return nil }
            var literals: [Bool] = []
            for (pattern, segment) in zip(route.components, segments) {
                if pattern.hasPrefix("{") && pattern.hasSuffix("}") {
                    literals.append(false)
                } else if pattern == segment {
                    literals.append(true)
                } else {
                    return nil
                }
            }
            return (literals, route.method)
        }
        guard let chosen = matching.map(\.literals).max(by: { Self.literalFirst($1, over: $0) }) else { return [] }
        return Array(Set(matching.filter { $0.literals == chosen }.map(\.method))).sorted { $0.rawValue < $1.rawValue }
    }

    /// Whether `a` takes a literal where `b` takes a capture at the first place they differ.
    private static func literalFirst(_ a: [Bool], over b: [Bool]) -> Bool {
        for (left, right) in zip(a, b) where left != right { return left }
        return false
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
