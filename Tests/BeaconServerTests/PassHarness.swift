import BeaconKit
@testable import BeaconServer
import BeaconWallet
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The router harness with pass signing configured and the office given an entrance: two
/// entrance zones (category "Entrance") beside the conference room Mordor, and a pass template.
struct PassHarness: Sendable {
    let base: RouterHarness
    let certificates: PassTestCertificates
    let entrances: [Zone]
    let mordorZone: Zone

    static let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

    static func templateJSON(pass overrides: [String: Any] = [:], images: [String: Any]? = nil, extra: [String: Any] = [:]) throws -> String {
        var pass: [String: Any] = [
            "formatVersion": 1, "passTypeIdentifier": PassTestCertificates.passTypeIdentifier, "teamIdentifier": "TEAMID1234",
            "organizationName": "Nerdery", "description": "Visitor pass",
            "generic": ["primaryFields": [["key": "welcome", "label": "Welcome", "value": "Bloomington Office"]]],
        ]
        for (key, value) in overrides { pass[key] = value }
        var object: [String: Any] = ["pass": pass, "images": images ?? ["icon.png": png, "logo.png": png]]
        for (key, value) in extra { object[key] = value }
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func with<T: Sendable>(signing: Bool = true, template: Bool = true,
                                  _ body: @Sendable (PassHarness, any TestClientProtocol) async throws -> T) async throws -> T {
        let certificates = try PassTestCertificates.make()
        var configuration = ServerConfiguration()
        if signing { configuration.passes = try certificates.passConfiguration() }
        return try await RouterHarness.with(configuration: configuration) { base, client in
            let store = base.server.store
            try await store.setCategory(Category(code: 3, name: "Entrance"))
            for (label, x) in [("North door", 1.0), ("South door", 2.0)] {
                _ = try await store.addBeacon(NewBeacon(siteID: base.office.site.id, category: 3, label: label,
                                                        position: Position(x: x, y: 1), state: .deployed))
            }
            let zones = try await store.zones(siteID: base.office.site.id)
            let harness = PassHarness(base: base, certificates: certificates, entrances: zones.filter { $0.category == 3 },
                                      mordorZone: try #require(zones.first { $0.minor == base.office.mordor.minor }))
            if template {
                try await client.execute(uri: harness.templatePath, method: .put, headers: base.headers(.operator),
                                         body: ByteBuffer(string: try templateJSON())) { response in
                    #expect(response.status == .ok, "\(response.text)")
                }
            }
            return try await body(harness, client)
        }
    }

    var siteID: Int { base.office.site.id }
    var templatePath: String { "/v1/sites/\(siteID)/pass-template" }
    var passesPath: String { "/v1/sites/\(siteID)/passes" }

    /// Issues a pass through the API and returns its description and its signed package.
    func issue(_ client: any TestClientProtocol, visitor: String = "Ada", zones: [Int]? = nil) async throws -> (IssuedPass, PassPackage) {
        var body: [String: Any] = ["visitor": visitor]
        if let zones { body["zones"] = zones }
        let issued = try await client.execute(uri: passesPath, method: .post, headers: base.headers(.operator),
                                              body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: body))) { response in
            #expect(response.status == .created, "\(response.text)")
            return try response.json(PassIssued.self)
        }
        let package = try await client.execute(uri: issued.download, method: .get, headers: base.headers(.operator)) { response in
            #expect(response.headers[.contentType] == "application/vnd.apple.pkpass")
            return try PassPackage.read(zip: Data(buffer: response.body))
        }
        return (issued.pass, package)
    }

    /// pass.json of a package, as an object.
    static func passObject(_ package: PassPackage) throws -> [String: Any] {
        let data = try #require(package.files["pass.json"])
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func authorization(_ package: PassPackage) throws -> HTTPFields {
        let token = try #require(try passObject(package)["authenticationToken"] as? String)
        return [.authorization: "ApplePass \(token)", .contentType: "application/json"]
    }
}
