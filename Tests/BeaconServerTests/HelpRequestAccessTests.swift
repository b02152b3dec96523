import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Who may call the help-request routes: no token (401), a wrong role or device (403 naming
/// `Authorization`, or `id` for a phone reaching for a request that is not its own or its
/// site's), the right caller (not refused; the request's state may still answer 409).
@Suite("Help request access")
struct HelpRequestAccessTests {
    enum Caller: Sendable, CustomStringConvertible {
        case role(Role)
        /// The phone that filed the request.
        case visitor
        /// A phone registered as a helper of the site.
        case helper
        /// Another phone of the site, not a helper.
        case otherDevice
        /// A helper phone of another site.
        case otherSiteHelper

        var description: String {
            switch self {
            case .role(let role): role.rawValue
            case .visitor: "visitor"
            case .helper: "helper"
            case .otherDevice: "other device"
            case .otherSiteHelper: "helper of another site"
            }
        }
    }

    struct Route: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var allowed: [Caller]
        /// Refused callers and the field each refusal names.
        var refused: [(Caller, String)]
        var body: String? = nil
        var testDescription: String { "\(method) \(path)" }
    }

    static let wrongRoles: [(Caller, String)] = [(.role(.gateway), "Authorization"), (.role(.enrolment), "Authorization")]

    static let routes: [Route] = [
        Route(method: .post, path: "/v1/help-requests", allowed: [.visitor, .otherDevice],
              refused: [(.role(.readOnly), "Authorization"), (.role(.operator), "Authorization")] + wrongRoles, body: #"{"minor":5}"#),
        Route(method: .get, path: "/v1/help-requests", allowed: [.role(.readOnly), .role(.operator), .helper],
              refused: [(.visitor, "Authorization"), (.otherDevice, "Authorization")] + wrongRoles),
        Route(method: .get, path: "/v1/help-requests?site=SITE", allowed: [.helper], refused: [(.otherSiteHelper, "site")]),
        Route(method: .get, path: "/v1/help-requests/events?follow=false", allowed: [.role(.readOnly), .helper],
              refused: [(.visitor, "Authorization")] + wrongRoles),
        Route(method: .get, path: "/v1/help-requests/metrics", allowed: [.role(.readOnly)],
              refused: [(.helper, "Authorization"), (.visitor, "Authorization")] + wrongRoles),
        Route(method: .get, path: "/v1/help-requests/REQUEST", allowed: [.visitor, .helper, .role(.readOnly)],
              refused: [(.otherDevice, "id"), (.otherSiteHelper, "id")] + wrongRoles),
        Route(method: .get, path: "/v1/help-requests/REQUEST/events?follow=false", allowed: [.visitor, .helper, .role(.readOnly)],
              refused: [(.otherDevice, "id")] + wrongRoles),
        Route(method: .post, path: "/v1/help-requests/REQUEST/acknowledge", allowed: [.helper, .role(.operator)],
              refused: [(.visitor, "Authorization"), (.otherDevice, "id"), (.otherSiteHelper, "id"), (.role(.readOnly), "Authorization")] + wrongRoles),
        Route(method: .post, path: "/v1/help-requests/REQUEST/reached", allowed: [.role(.operator)],
              refused: [(.visitor, "Authorization"), (.helper, "id"), (.otherDevice, "id"), (.role(.readOnly), "Authorization")] + wrongRoles),
        Route(method: .post, path: "/v1/help-requests/REQUEST/done", allowed: [.role(.admin)],
              refused: [(.visitor, "Authorization"), (.helper, "id"), (.otherDevice, "id"), (.role(.readOnly), "Authorization")] + wrongRoles),
        Route(method: .post, path: "/v1/help-requests/REQUEST/cancel", allowed: [.visitor, .role(.operator)],
              refused: [(.helper, "Authorization"), (.otherDevice, "id"), (.role(.readOnly), "Authorization")] + wrongRoles),
        Route(method: .get, path: "/v1/help-helpers", allowed: [.role(.readOnly)],
              refused: [(.helper, "Authorization"), (.visitor, "Authorization")] + wrongRoles),
        Route(method: .put, path: "/v1/help-helpers/OTHER", allowed: [.role(.operator)],
              refused: [(.role(.readOnly), "Authorization"), (.helper, "Authorization"), (.visitor, "Authorization")] + wrongRoles),
        Route(method: .delete, path: "/v1/help-helpers/HELPER", allowed: [.role(.operator)],
              refused: [(.role(.readOnly), "Authorization"), (.helper, "Authorization"), (.visitor, "Authorization")] + wrongRoles),
    ]

    @Test(arguments: routes)
    func refusesUnauthenticatedAndWrongCallersAndAdmitsTheRightOnes(route: Route) async throws {
        try await AppsHarness.with { app in
            let (visitor, visitorToken) = try await app.register(name: "visitor")
            let (helper, helperToken) = try await app.register(name: "helper")
            let (other, otherToken) = try await app.register(name: "other")
            let annex = try await app.store.createSite(NewSite(organisationID: app.office.organisation.id, name: "Annex"))
            let (annexHelper, annexToken) = try await app.register(name: "annex helper", siteID: annex.id)
            _ = try await app.store.addHelper(deviceID: helper.id, now: app.clock.now)
            _ = try await app.store.addHelper(deviceID: annexHelper.id, now: app.clock.now)
            let request = try await app.store.fileHelpRequest(deviceID: visitor.id, NewHelpRequest(minor: 1), now: app.clock.now)
            let path = route.path.replacingOccurrences(of: "REQUEST", with: "\(request.id)").replacingOccurrences(of: "SITE", with: "\(app.office.site.id)")
                .replacingOccurrences(of: "OTHER", with: other.id).replacingOccurrences(of: "HELPER", with: helper.id)
            func token(_ caller: Caller) -> String {
                switch caller {
                case .role(let role): app.tokens[role] ?? ""
                case .visitor: visitorToken
                case .helper: helperToken
                case .otherDevice: otherToken
                case .otherSiteHelper: annexToken
                }
            }
            let anonymous = try await app.call(route.method, path, json: route.body)
            #expect(anonymous.status == .unauthorized && anonymous.errorField == "Authorization", "\(anonymous.text)")
            for (caller, field) in route.refused {
                let response = try await app.call(route.method, path, token: token(caller), json: route.body)
                #expect(response.status == .forbidden, "\(caller): \(response.status) \(response.text)")
                #expect(response.errorField == field, "\(caller): \(response.text)")
            }
            for caller in route.allowed {
                let response = try await app.call(route.method, path, token: token(caller), json: route.body)
                #expect(response.status != .unauthorized && response.status != .forbidden, "\(caller): \(response.status) \(response.text)")
                #expect(response.status.code < 500, "\(caller): \(response.status) \(response.text)")
            }
        }
    }

    @Test func onlyTheAcknowledgingHelperMarksItAndStaffCanDoSoToo() async throws {
        try await AppsHarness.with { app in
            let (visitor, _) = try await app.register(name: "visitor")
            let (first, firstToken) = try await app.register(name: "first helper")
            let (second, secondToken) = try await app.register(name: "second helper")
            for helper in [first, second] { _ = try await app.store.addHelper(deviceID: helper.id, now: app.clock.now) }
            let request = try await app.store.fileHelpRequest(deviceID: visitor.id, NewHelpRequest(minor: 9), now: app.clock.now)
            #expect(try await app.call(.post, "/v1/help-requests/\(request.id)/acknowledge", token: firstToken).status == .ok)
            let stolen = try await app.call(.post, "/v1/help-requests/\(request.id)/reached", token: secondToken)
            #expect(stolen.status == .forbidden && stolen.errorField == "id")
            #expect(try await app.call(.post, "/v1/help-requests/\(request.id)/reached", token: firstToken).status == .ok)
            // A helper no longer is refused on its next call.
            #expect(try await app.call(.delete, "/v1/help-helpers/\(second.id)", as: .operator).status == .noContent)
            let gone = try await app.call(.get, "/v1/help-requests/\(request.id)", token: secondToken)
            #expect(gone.status == .forbidden && gone.errorField == "id")
        }
    }

    /// Every help-request route is in /openapi.yaml.
    @Test func openAPIDocumentsTheHelpRequestRoutes() throws {
        let document = ProximaServer.openAPIDocument
        for path in ["/v1/help-requests", "/v1/help-requests/events", "/v1/help-requests/metrics", "/v1/help-requests/{id}",
                     "/v1/help-requests/{id}/events", "/v1/help-requests/{id}/acknowledge", "/v1/help-requests/{id}/reached",
                     "/v1/help-requests/{id}/done", "/v1/help-requests/{id}/cancel", "/v1/help-helpers", "/v1/help-helpers/{id}"] {
            #expect(document.contains("\n  \(path):\n"), "\(path) is missing from openapi.yaml")
        }
        for schema in ["HelpRequest", "NewHelpRequest", "HelpRequestChange", "HelpRequestMetrics", "HelpBeacon", "HelpHelper", "HelpDistance"] {
            #expect(document.contains("\n    \(schema):\n"), "schema \(schema) is missing")
        }
    }

    /// What the server sends has the schema's required keys when nothing optional is set, and
    /// only documented keys when everything is.
    @Test func helpRequestSchemaMatchesWhatIsSent() throws {
        let document = ProximaServer.openAPIDocument
        let beacon = HelpBeacon(uuid: UUID(), major: 999, minor: 1)
        let distance = HelpDistance(distance: 1, proximity: "near", receiverID: "g", receiverName: "gw", time: 1)
        let bare = HelpRequest(id: 1, siteID: 1, deviceID: "d", name: nil, beacon: beacon, state: .open, nearest: nil, createdAt: 1,
                               acknowledgedAt: nil, helper: nil, reachedAt: nil, reachedBy: nil, doneAt: nil, cancelledAt: nil,
                               helperDistance: nil, gatewayDistance: nil, room: nil, version: 0)
        var full = bare
        full.name = "Ann"; full.nearest = beacon; full.acknowledgedAt = 2; full.helper = HelpHelper(id: "token-1", name: "op", deviceID: "x")
        full.reachedAt = 3; full.reachedBy = "ranging"; full.doneAt = 4; full.cancelledAt = 5; full.helperDistance = distance
        full.gatewayDistance = distance; full.room = "Lobby"
        func keys(_ value: some Encodable) throws -> Set<String> {
            Set(try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any]).keys)
        }
        let schema = try OpenAPIContractTests.Schema(named: "HelpRequest", in: document)
        #expect(try keys(bare) == schema.required)
        #expect(try keys(full) == schema.properties)
        let change = try OpenAPIContractTests.Schema(named: "HelpRequestChange", in: document)
        #expect(try keys(HelpRequestChange(id: 1, kind: "filed", time: 1, request: bare)) == change.required)
    }
}
