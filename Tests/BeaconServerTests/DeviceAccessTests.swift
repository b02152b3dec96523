import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Who may call the device and message routes: no token (401), a wrong role (403), the right
/// role (2xx); and a device token reaching for another device's data is refused.
@Suite("Device and message access")
struct DeviceAccessTests {
    /// Who calls: a role's token, the device the path names, or another device of the site.
    enum Caller: Sendable, CustomStringConvertible {
        case role(Role)
        case ownDevice
        case otherDevice

        var description: String {
            switch self {
            case .role(let role): role.rawValue
            case .ownDevice: "own device"
            case .otherDevice: "other device"
            }
        }
    }

    struct Route: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var allowed: [Caller]
        var refused: [Caller]
        var body: String? = nil
        var testDescription: String { "\(method) \(path)" }
    }

    static let device = #"{"siteID":SITE,"name":"phone","consent":{"events":true,"positions":false}}"#
    static let message = #"{"zoneID":ZONE,"body":"Hello"}"#

    static let routes: [Route] = [
        Route(method: .post, path: "/v1/devices", allowed: [.role(.enrolment), .role(.operator), .role(.admin)],
              refused: [.role(.readOnly), .role(.gateway), .ownDevice], body: device),
        Route(method: .get, path: "/v1/devices", allowed: [.role(.operator), .role(.admin)],
              refused: [.role(.readOnly), .role(.gateway), .role(.enrolment), .ownDevice]),
        Route(method: .get, path: "/v1/devices/DEVICE", allowed: [.ownDevice, .role(.operator)],
              refused: [.otherDevice, .role(.readOnly), .role(.gateway), .role(.enrolment)]),
        Route(method: .get, path: "/v1/devices/DEVICE/events?format=json", allowed: [.ownDevice, .role(.readOnly)],
              refused: [.otherDevice, .role(.gateway), .role(.enrolment)]),
        Route(method: .get, path: "/v1/devices/DEVICE/events?follow=false", allowed: [.ownDevice],
              refused: [.otherDevice, .role(.gateway)]),
        Route(method: .delete, path: "/v1/devices/DEVICE", allowed: [.ownDevice],
              refused: [.otherDevice, .role(.readOnly), .role(.gateway), .role(.enrolment)]),
        Route(method: .delete, path: "/v1/devices/DEVICE", allowed: [.role(.operator)], refused: [.otherDevice]),
        Route(method: .post, path: "/v1/messages", allowed: [.role(.operator)],
              refused: [.role(.readOnly), .role(.gateway), .ownDevice, .role(.enrolment)], body: message),
        Route(method: .get, path: "/v1/messages", allowed: [.role(.readOnly)], refused: [.role(.gateway), .ownDevice]),
        Route(method: .get, path: "/v1/messages?uuid=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0&major=1&minor=1001",
              allowed: [.ownDevice, .role(.readOnly)], refused: [.role(.gateway), .role(.enrolment)]),
        Route(method: .get, path: "/v1/messages/MESSAGE", allowed: [.role(.readOnly)], refused: [.role(.gateway), .ownDevice]),
        Route(method: .put, path: "/v1/messages/MESSAGE", allowed: [.role(.operator)], refused: [.role(.readOnly), .ownDevice], body: message),
        Route(method: .delete, path: "/v1/messages/MESSAGE", allowed: [.role(.operator)], refused: [.role(.readOnly), .ownDevice]),
        Route(method: .post, path: "/v1/sightings", allowed: [.ownDevice], refused: [.role(.operator), .role(.enrolment)],
              body: #"{"sightings":[]}"#),
    ]

    @Test(arguments: routes)
    func refusesUnauthenticatedAndWrongCallersAndAdmitsTheRightOnes(route: Route) async throws {
        try await AppsHarness.with { app in
            let (own, ownToken) = try await app.register(name: "own")
            let (_, otherToken) = try await app.register(name: "other")
            let messageID = try await app.createMessage(Self.message.replacingOccurrences(of: "ZONE", with: "\(app.zoneID)"))
            let path = route.path.replacingOccurrences(of: "DEVICE", with: own.id).replacingOccurrences(of: "MESSAGE", with: "\(messageID)")
            let body = route.body?.replacingOccurrences(of: "SITE", with: "\(app.office.site.id)").replacingOccurrences(of: "ZONE", with: "\(app.zoneID)")
            func token(_ caller: Caller) -> String {
                switch caller {
                case .role(let role): app.tokens[role]!
                case .ownDevice: ownToken
                case .otherDevice: otherToken
                }
            }
            let anonymous = try await app.call(route.method, path, json: body)
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.errorField == "Authorization")
            for caller in route.refused {
                let response = try await app.call(route.method, path, token: token(caller), json: body)
                #expect(response.status == .forbidden, "\(caller): \(response.status) \(response.text)")
                // Another device's id is refused by name; a role without the right by its token.
                #expect(response.errorField == (caller.isOtherDevice ? "id" : "Authorization"), "\(caller): \(response.text)")
            }
            for caller in route.allowed {
                let response = try await app.call(route.method, path, token: token(caller), json: body)
                #expect((200..<300).contains(response.status.code), "\(caller): \(response.status) \(response.text)")
            }
        }
    }

    @Test func aDeviceReadingAnotherDevicesDataIsRefusedNamingTheID() async throws {
        try await AppsHarness.with { app in
            let (own, _) = try await app.register(name: "own")
            let (_, otherToken) = try await app.register(name: "other")
            for path in ["/v1/devices/\(own.id)", "/v1/devices/\(own.id)/events?format=json"] {
                let response = try await app.call(.get, path, token: otherToken)
                #expect(response.status == .forbidden)
                #expect(response.errorField == "id")
            }
            #expect(try await app.call(.delete, "/v1/devices/\(own.id)", token: otherToken).status == .forbidden)
            #expect(try await app.server.store.devices().devices.count == 2)
        }
    }

    @Test func aDeviceLooksUpOnlyItsOwnSitesBeacons() async throws {
        try await AppsHarness.with { app in
            let store = app.server.store
            let annex = try await store.createSite(NewSite(organisationID: app.office.organisation.id, name: "Annex"))
            let (_, annexToken) = try await app.register(name: "annex phone", siteID: annex.id)
            let response = try await app.call(.get, app.lookupPath, token: annexToken)
            #expect(response.status == .forbidden)
            #expect(response.errorField == "major")
            let own = "/v1/messages?uuid=\(annex.uuid.uuidString)&major=\(annex.major)&minor=1001"
            #expect(try await app.call(.get, own, token: annexToken).status == .ok)
        }
    }

    @Test func deviceTokensComeOnlyWithARegistration() async throws {
        try await AppsHarness.with { app in
            let device = try await app.call(.post, "/v1/tokens", as: .admin, json: #"{"name":"x","role":"device"}"#)
            #expect(device.status == .unprocessableContent)
            #expect(device.errorField == "role")
            let enrolment = try await app.call(.post, "/v1/tokens", as: .admin, json: #"{"name":"app","role":"enrolment"}"#)
            #expect(enrolment.status == .created)
            // An enrolment token registers devices and reads nothing.
            let token = try enrolment.json(IssuedToken.self).token
            #expect(try await app.call(.get, "/v1/events?format=json", token: token).status == .forbidden)
            #expect(try await app.call(.get, "/v1/sites", token: token).status == .forbidden)
        }
    }

    /// Every route of this part is in /openapi.yaml.
    @Test func openAPIDocumentsTheDeviceAndMessageRoutes() throws {
        let document = ProximaServer.openAPIDocument
        for path in ["/v1/devices", "/v1/devices/{id}", "/v1/devices/{id}/events", "/v1/messages", "/v1/messages/{id}"] {
            #expect(document.contains("\n  \(path):\n"), "missing \(path)")
        }
        for role in ["device", "enrolment"] { #expect(document.contains(role)) }
        let schedule = MessageSchedule()
        let device = Device(id: "d", siteID: 1, name: nil, anonymous: true, consent: DeviceConsent(events: true, positions: false), createdAt: 1)
        let message = DayMessage(id: 1, siteID: 1, zoneID: nil, beaconID: nil, format: .text, body: "x", schedule: schedule, createdAt: 1, updatedAt: 1)
        let answers: [(String, any Encodable)] = [
            ("Device", device),
            ("DeviceConsent", device.consent),
            ("RegisteredDevice", RegisteredDevice(device: device, token: "t")),
            ("MessageSchedule", schedule),
            ("DayMessage", message),
            ("SavedDayMessage", SavedDayMessage(message: message, removed: [])),
            ("DeliveredMessage", message.delivered),
            ("MessageLookup", MessageLookup(uuid: UUID(), major: 1, minor: 1, label: nil, message: nil)),
        ]
        for (name, value) in answers {
            let schema = try OpenAPIContractTests.Schema(named: name, in: document)
            let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
            #expect(Set(object.keys) == schema.required, "\(name): carries \(object.keys.sorted()), documents \(schema.required.sorted())")
        }
        // The requests: leaving out a field fails exactly when the document requires it.
        let requests: [(String, String, @Sendable (Data) throws -> Void)] = [
            ("NewDevice", #"{"siteID":1,"name":"x","anonymous":false,"consent":{"events":true,"positions":false}}"#,
             { _ = try JSONDecoder().decode(NewDevice.self, from: $0) }),
            ("NewDayMessage", #"{"zoneID":1,"beaconID":2,"format":"text","body":"x","schedule":{"timeZone":"UTC"}}"#,
             { _ = try JSONDecoder().decode(NewDayMessage.self, from: $0) }),
        ]
        for (name, complete, decode) in requests {
            let schema = try OpenAPIContractTests.Schema(named: name, in: document)
            let object = try #require(JSONSerialization.jsonObject(with: Data(complete.utf8)) as? [String: Any])
            #expect(Set(object.keys) == schema.properties, "\(name): example must have every documented property")
            for key in object.keys {
                var partial = object
                partial.removeValue(forKey: key)
                let fails = (try? decode(JSONSerialization.data(withJSONObject: partial))) == nil
                #expect(fails == schema.required.contains(key), "\(name).\(key)")
            }
        }
    }
}

extension DeviceAccessTests.Caller {
    var isOtherDevice: Bool {
        if case .otherDevice = self { return true }
        return false
    }
}
