import BeaconTesting
@testable import BeaconServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The dashboard's routes without a browser: its files and their headers, the sign-in code
/// exchange, and the two small reading routes, for each role.
@Suite("Dashboard routes")
struct DashboardRouteTests {
    @Test func indexIsServedWithAPolicyThatAllowsNoInlineScriptOrOtherHost() async throws {
        try await RouterHarness.with { _, client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(policy.contains("default-src 'none'"))
                #expect(policy.contains("script-src 'self'") && policy.contains("style-src 'self'") && policy.contains("connect-src 'self'"))
                #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval") && !policy.contains("http"))
                #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                #expect(response.text.contains(#"<script type="module" src="/dashboard/app.js"></script>"#))
            }
            try await client.execute(uri: "/dashboard/pages/venue.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(response.headers[.contentSecurityPolicy] != nil)
            }
            try await client.execute(uri: "/dashboard/../Resources/openapi.yaml", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/dashboard/nothing.js", method: .get) { #expect($0.status == .notFound) }
        }
    }

    /// The files themselves: no inline script or style in the page, and no script that inserts
    /// HTML (every outside text goes in with textContent).
    @Test func filesHaveNoInlineCodeAndInsertNoHTML() throws {
        let files = DashboardFiles.shared.files
        #expect(files.count >= 10, "\(files.keys.sorted())")
        let index = String(decoding: try #require(files["/dashboard/index.html"]).contents, as: UTF8.self)
        #expect(!index.contains("<style") && !index.contains(" style=") && !index.contains("javascript:"))
        let scriptTags = index.components(separatedBy: "<script").dropFirst()
        #expect(scriptTags.allSatisfy { $0.hasPrefix(#" type="module" src="/dashboard/"#) && $0.contains("></script>") })
        #expect(index.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "inline handler in index.html")
        for (path, file) in files where path.hasSuffix(".js") {
            let text = String(decoding: file.contents, as: UTF8.self)
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
                #expect(!text.contains(sink), "\(path) uses \(sink)")
            }
            #expect(!text.contains("localStorage"), "\(path): the token belongs in sessionStorage only")
        }
    }

    @Test func aSignInCodeIsExchangedOnceForItsToken() async throws {
        try await RouterHarness.with { harness, client in
            let code = await harness.server.signInCodes.issue(for: try #require(harness.tokens[.operator]))
            try await client.execute(uri: "/v1/sign-in", method: .post, headers: harness.headers(nil),
                                     body: ByteBuffer(string: #"{"code":"\#(code)"}"#)) { response in
                #expect(response.status == .ok)
                struct Answer: Decodable { var token: String; var name: String; var role: String }
                let answer = try response.json(Answer.self)
                #expect(answer.token == harness.tokens[.operator])
                #expect(answer.role == "operator")
            }
            try await client.execute(uri: "/v1/sign-in", method: .post, headers: harness.headers(nil),
                                     body: ByteBuffer(string: #"{"code":"\#(code)"}"#)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.errorField == "code")
            }
            try await client.execute(uri: "/v1/sign-in", method: .post, headers: harness.headers(nil),
                                     body: ByteBuffer(string: #"{"code":"00112233445566778899aabbccddeeff"}"#)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.errorField == "code")
            }
            try await client.execute(uri: "/v1/sign-in", method: .post, headers: harness.headers(nil),
                                     body: ByteBuffer(string: #"{"token":"x"}"#)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "code")
            }
        }
    }

    @Test func anExpiredCodeIsRefused() async throws {
        let clock = TestClock()
        let codes = SignInCodes(lifetime: .seconds(600), clock: clock)
        let code = await codes.issue(for: "px_some-token-0123456789")
        let other = await codes.issue(for: "px_other-token-0123456789")
        clock.advance(by: .seconds(599))
        #expect(await codes.redeem(other) == "px_other-token-0123456789", "a code works until its lifetime is over")
        clock.advance(by: .seconds(1))
        #expect(await codes.redeem(code) == nil)
        let kept = SignInCodes(lifetime: .seconds(60), capacity: 2)
        let first = await kept.issue(for: "px_first-token-0123456789")
        _ = await kept.issue(for: "px_second-token-0123456789")
        _ = await kept.issue(for: "px_third-token-0123456789")
        // At capacity the oldest code gives way, so issuing cannot grow memory without bound.
        #expect(await kept.redeem(first) == nil)
    }

    struct Route: Sendable, CustomTestStringConvertible {
        var path: String
        var testDescription: String { path }
    }

    @Test(arguments: [Route(path: "/v1/session"), Route(path: "/v1/events/cursor")])
    func readingRoutesRefuseNoTokenAndGatewaysAndAdmitReaders(route: Route) async throws {
        try await RouterHarness.with { harness, client in
            try await client.execute(uri: route.path, method: .get, headers: harness.headers(nil)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.errorField == "Authorization")
            }
            try await client.execute(uri: route.path, method: .get, headers: harness.headers(.gateway)) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorField == "Authorization")
            }
            for role in [Role.readOnly, .operator, .admin] {
                try await client.execute(uri: route.path, method: .get, headers: harness.headers(role)) { response in
                    #expect(response.status == .ok, "\(role)")
                }
            }
        }
    }

    @Test func sessionSaysWhetherTheTokenMayChangeThings() async throws {
        struct Session: Decodable { var name: String; var role: String; var canOperate: Bool }
        try await RouterHarness.with { harness, client in
            try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(.readOnly)) { response in
                let session = try response.json(Session.self)
                #expect(session.role == "read-only" && !session.canOperate)
            }
            try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(.operator)) { response in
                let session = try response.json(Session.self)
                #expect(session.canOperate)
            }
        }
    }

    @Test func cursorIsTheNewestStoredEvent() async throws {
        struct Cursor: Decodable { var lastID: Int }
        try await RouterHarness.with { harness, client in
            try await client.execute(uri: "/v1/events/cursor", method: .get, headers: harness.headers(.readOnly)) { response in
                let cursor = try response.json(Cursor.self)
                #expect(cursor.lastID == 0)
            }
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway),
                                     body: try harness.batchBody((0..<5).map { harness.sighting(100 + Double($0)) })) { #expect($0.status == .accepted) }
            var newest = 0
            try await client.execute(uri: "/v1/events?format=json", method: .get, headers: harness.headers(.readOnly)) { response in
                newest = try response.json([StoredEvent].self).map(\.id).max() ?? 0
            }
            #expect(newest > 0)
            try await client.execute(uri: "/v1/events/cursor", method: .get, headers: harness.headers(.readOnly)) { response in
                let cursor = try response.json(Cursor.self)
                #expect(cursor.lastID == newest)
            }
        }
    }

    @Test func openAPIDocumentsTheDashboardRoutes() {
        for path in ["/", "/v1/sign-in", "/v1/session", "/v1/events/cursor"] {
            #expect(ProximaServer.openAPIDocument.contains("\n  \(path):\n"), "missing \(path)")
        }
    }
}
