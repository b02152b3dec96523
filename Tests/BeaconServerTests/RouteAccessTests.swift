@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Every route refuses callers without a valid token (401) and callers whose role lacks the
/// right (403), and lets the right role through.
@Suite("Route access")
struct RouteAccessTests {
    struct Route: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var allowed: Role
        var refused: Role
        var body: String = "{}"
        var testDescription: String { "\(method) \(path)" }
    }

    static let routes: [Route] = [
        Route(method: .post, path: "/v1/tokens", allowed: .admin, refused: .operator, body: #"{"name":"x","role":"read-only"}"#),
        Route(method: .post, path: "/v1/gateways", allowed: .admin, refused: .operator, body: #"{"name":"new gateway"}"#),
        Route(method: .get, path: "/v1/audit", allowed: .admin, refused: .operator),
        Route(method: .get, path: "/v1/gateways", allowed: .readOnly, refused: .gateway),
        Route(method: .get, path: "/v1/organisations", allowed: .readOnly, refused: .gateway),
        Route(method: .post, path: "/v1/organisations", allowed: .operator, refused: .readOnly,
              body: #"{"name":"Other","proximityUUIDs":["B9407F30-F5F8-466E-AFF9-25556B57FE6D"]}"#),
        Route(method: .get, path: "/v1/categories", allowed: .readOnly, refused: .gateway),
        Route(method: .put, path: "/v1/categories/4", allowed: .operator, refused: .readOnly, body: #"{"name":"Kitchen"}"#),
        Route(method: .get, path: "/v1/sites", allowed: .readOnly, refused: .gateway),
        Route(method: .post, path: "/v1/sites", allowed: .operator, refused: .readOnly, body: "SITE"),
        Route(method: .patch, path: "/v1/sites/1", allowed: .operator, refused: .readOnly, body: #"{"retainEvents":3600}"#),
        Route(method: .get, path: "/v1/sites/1/zones", allowed: .readOnly, refused: .gateway),
        Route(method: .post, path: "/v1/sites/1/plan", allowed: .operator, refused: .readOnly,
              body: #"[{"category":5,"label":"Door","x":1,"y":1}]"#),
        Route(method: .get, path: "/v1/beacons", allowed: .readOnly, refused: .gateway),
        Route(method: .post, path: "/v1/beacons", allowed: .operator, refused: .readOnly,
              body: #"{"siteID":1,"category":6,"label":"Till","position":{"x":1,"y":1},"measuredPower":-59,"txPower":0,"battery":"AA","state":"planned"}"#),
        Route(method: .patch, path: "/v1/beacons/1", allowed: .operator, refused: .gateway, body: #"{"state":"deployed"}"#),
        Route(method: .get, path: "/v1/validation", allowed: .readOnly, refused: .gateway),
        Route(method: .get, path: "/v1/resolve?uuid=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0&major=1&minor=1001", allowed: .readOnly, refused: .gateway),
        Route(method: .get, path: "/v1/organisations/ORG/directory", allowed: .readOnly, refused: .gateway),
        Route(method: .put, path: "/v1/directory", allowed: .operator, refused: .readOnly, body: "DIRECTORY"),
        Route(method: .post, path: "/v1/sightings", allowed: .gateway, refused: .admin, body: #"{"sightings":[]}"#),
        Route(method: .post, path: "/v1/gateways/april-brother", allowed: .gateway, refused: .admin, body: #"{"devices":[]}"#),
        Route(method: .get, path: "/v1/ranging", allowed: .readOnly, refused: .gateway),
        Route(method: .get, path: "/v1/events?follow=false", allowed: .readOnly, refused: .gateway),
        Route(method: .get, path: "/v1/events?format=json&limit=2&after=0", allowed: .readOnly, refused: .gateway),
        Route(method: .get, path: "/v1/events/ws", allowed: .readOnly, refused: .gateway),
        Route(method: .get, path: "/v1/webhooks", allowed: .readOnly, refused: .gateway),
        Route(method: .post, path: "/v1/webhooks", allowed: .admin, refused: .operator,
              body: #"{"url":"http://127.0.0.1:9/hook","secret":"0123456789abcdef"}"#),
    ]

    @Test(arguments: routes)
    func refusesUnauthenticatedAndWrongRoleAndAdmitsTheRightOne(route: Route) async throws {
        try await RouterHarness.with { harness, client in
            let path = route.path.replacingOccurrences(of: "ORG", with: harness.office.organisation.id.uuidString)
            let body = try Self.body(route, harness: harness)
            try await client.execute(uri: path, method: route.method, headers: harness.headers(nil), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
                #expect(response.errorField == "Authorization")
            }
            var forged = harness.headers(nil)
            forged[.authorization] = "Bearer px_not-a-real-token-at-all"
            try await client.execute(uri: path, method: route.method, headers: forged, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: path, method: route.method, headers: harness.headers(route.refused), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .forbidden)
                #expect(response.text.contains("'\(route.refused.rawValue)'"))
            }
            var allowed = harness.headers(route.allowed)
            if route.path == "/v1/events/ws" {
                // A plain GET of the event socket is told to upgrade.
                try await client.execute(uri: path, method: route.method, headers: allowed) { response in
                    #expect(response.status == .upgradeRequired)
                    #expect(response.errorField == "Upgrade")
                }
                allowed[.upgrade] = "websocket"
            }
            try await client.execute(uri: path, method: route.method, headers: allowed, body: ByteBuffer(string: body)) { response in
                if route.path == "/v1/events/ws" {
                    // With an upgrade request the router answers the handshake's HTTP part.
                    #expect(response.status == .ok)
                } else {
                    #expect((200..<300).contains(response.status.code), "\(route.method) \(path): \(response.status) \(response.text)")
                }
            }
        }
    }

    static func body(_ route: Route, harness: RouterHarness) throws -> String {
        switch route.body {
        case "SITE":
            return #"{"organisationID":"\#(harness.office.organisation.id.uuidString)","name":"Annex","retainEvents":86400}"#
        case "DIRECTORY":
            let directory = Directory(organisation: harness.office.organisation, categories: ["9": "Lobby"], locations: [
                .init(uuid: Fixture.nerderyUUID, major: 40, name: "Annex", address: "", planWidth: 0, planHeight: 0,
                      minors: [.init(minor: 9001, category: 9, label: "Front", x: 0, y: 0)]),
            ])
            return String(decoding: try JSONEncoder().encode(directory), as: UTF8.self)
        default:
            return route.body
        }
    }

    @Test func publicRoutesNeedNoToken() async throws {
        try await RouterHarness.with { harness, client in
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text.contains("proxima_http_requests_total"))
            }
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text.hasPrefix("openapi: 3.1.0"))
            }
        }
    }

    /// The OpenAPI file documents every route the router serves.
    @Test func openAPIDocumentsEveryRoute() {
        let document = ProximaServer.openAPIDocument
        var paths = Set(Self.routes.map { route -> String in
            let path = String(route.path.split(separator: "?")[0])
            return path.replacingOccurrences(of: "/1/", with: "/{id}/").replacingOccurrences(of: "/4", with: "/{code}")
                .replacingOccurrences(of: "ORG", with: "{id}").replacingOccurrences(of: "beacons/1", with: "beacons/{id}")
                .replacingOccurrences(of: "sites/1", with: "sites/{id}")
        })
        paths.formUnion(["/health", "/metrics", "/openapi.yaml"])
        for path in paths {
            #expect(document.contains("\n  \(path):\n"), "missing \(path)")
        }
    }
}
