@testable import BeaconServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// /openapi.yaml is the single truth about the routes (issue 16, item 2): every route the router
/// serves is documented with its method, every documented one is served, a path nobody serves
/// is 404 and a method a served path does not take is 405 naming the ones it does.
@Suite("OpenAPI routes")
struct OpenAPIRouteTests {
    /// "GET /v1/tokens/{id}" for each operation under `paths:`, read from the document's own
    /// layout: a path at two spaces of indentation, its methods at four.
    static func documentedOperations(in document: String) -> Set<String> {
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        for line in document.components(separatedBy: "\n") {
            let indent = line.prefix { $0 == " " }.count
            let text = line.trimmingCharacters(in: .whitespaces)
            if indent == 0, !text.isEmpty {
                inPaths = text == "paths:"
                path = nil
            } else if inPaths, indent == 2, text.hasPrefix("/"), text.hasSuffix(":") {
                path = String(text.dropLast())
            } else if inPaths, indent == 4, let current = path, let colon = text.firstIndex(of: ":"),
                      methods.contains(String(text[..<colon])) {
                operations.insert("\(text[..<colon].uppercased()) \(current)")
            }
        }
        return operations
    }

    static func servedOperations(_ server: ProximaServer) -> Set<String> {
        Set(server.makeRouter().routes.map { "\($0.method.rawValue) \($0.path.description)" })
    }

    @Test func everyServedRouteIsDocumentedAndEveryDocumentedRouteIsServed() async throws {
        try await RouterHarness.with { harness, _ in
            let documented = Self.documentedOperations(in: ProximaServer.openAPIDocument)
            let served = Self.servedOperations(harness.server)
            #expect(documented.count > 50, "the document's paths were not read: \(documented.sorted())")
            #expect(served.subtracting(documented).isEmpty,
                    "served but missing from openapi.yaml: \(served.subtracting(documented).sorted())")
            #expect(documented.subtracting(served).isEmpty,
                    "in openapi.yaml but not served: \(documented.subtracting(served).sorted())")
        }
    }

    /// The comparison itself notices a difference in either direction.
    @Test func aRouteMissingFromTheDocumentIsFound() {
        let document = """
            openapi: 3.1.0
            paths:
              /v1/things/{id}:
                get:
                  summary: one
                delete: { summary: gone }
            components: {}
            """
        #expect(Self.documentedOperations(in: document) == ["GET /v1/things/{id}", "DELETE /v1/things/{id}"])
    }

    @Test func undocumentedPathsAre404AndUndeclaredMethods405WithAllow() async throws {
        try await RouterHarness.with { harness, client in
            for uri in ["/v1/nothing", "/v2/sites", "/v1/sites/1/nothing", "/dashboard/nothing.js", "/v1/tokens/1/2"] {
                for role in [Role.admin, nil] {
                    try await client.execute(uri: uri, method: .get, headers: harness.headers(role)) { response in
                        #expect(response.status == .notFound, "GET \(uri)")
                    }
                }
            }
            let cases: [(String, HTTPRequest.Method, String)] = [
                ("/v1/tokens", .put, "GET, POST"), ("/v1/tokens/7", .get, "DELETE"),
                ("/health", .post, "GET"), ("/v1/sites/3/plan", .patch, "POST"),
                // The router takes the literal `save` before the capture `{recording}`, with no
                // going back, so DELETE is not served here (it had been advertised).
                ("/v1/sites/3/survey-recordings/save", .options, "POST"), ("/v1/sites/3/survey-recordings/save", .delete, "POST"),
            ]
            for (uri, method, allow) in cases {
                try await client.execute(uri: uri, method: method, headers: harness.headers(.admin)) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                    #expect(response.headers[.allow] == allow, "\(method) \(uri)")
                    #expect(response.errorField == "method")
                }
            }
            // A capture still serves its own method where no literal is in the way.
            try await client.execute(uri: "/v1/sites/3/survey-recordings/7", method: .delete, headers: harness.headers(.admin)) { response in
                #expect(response.status != .methodNotAllowed)
            }
        }
    }
}
