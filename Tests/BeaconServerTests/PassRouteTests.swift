@testable import BeaconServer
import BeaconKit
import BeaconWallet
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import X509

/// Issue 17, item 4: pass templates per site, issuing passes with the site's beacons, and
/// downloading the signed .pkpass; every route by role, every refusal by field.
@Suite("Pass routes")
struct PassRouteTests {
    struct Access: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var allowed: Role
        var refused: Role
        var body: String = ""
        var success: HTTPResponse.Status
        var testDescription: String { "\(method) \(path)" }
    }

    static let routes: [Access] = [
        Access(method: .put, path: "/v1/sites/SITE/pass-template", allowed: .operator, refused: .readOnly, body: "TEMPLATE", success: .ok),
        Access(method: .get, path: "/v1/sites/SITE/pass-template", allowed: .readOnly, refused: .gateway, success: .ok),
        Access(method: .post, path: "/v1/sites/SITE/passes", allowed: .operator, refused: .readOnly, body: #"{"visitor":"Ada"}"#, success: .created),
        Access(method: .get, path: "/v1/sites/SITE/passes", allowed: .readOnly, refused: .gateway, success: .ok),
        Access(method: .get, path: "/v1/sites/SITE/passes/SERIAL", allowed: .operator, refused: .readOnly, success: .ok),
        Access(method: .put, path: "/v1/zones/ZONE/minor", allowed: .operator, refused: .readOnly, body: #"{"minor":1009}"#, success: .ok),
    ]

    @Test(arguments: routes)
    func refusesNoTokenAndWrongRoleAndAdmitsTheRightOne(route: Access) async throws {
        try await PassHarness.with { harness, client in
            let (pass, _) = try await harness.issue(client)
            let path = route.path.replacingOccurrences(of: "SITE", with: String(harness.siteID))
                .replacingOccurrences(of: "SERIAL", with: pass.serial).replacingOccurrences(of: "ZONE", with: String(harness.mordorZone.id))
            let body = route.body == "TEMPLATE" ? try PassHarness.templateJSON() : route.body
            try await client.execute(uri: path, method: route.method, headers: harness.base.headers(nil), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.errorField == "Authorization")
            }
            try await client.execute(uri: path, method: route.method, headers: harness.base.headers(route.refused), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorField == "Authorization")
            }
            try await client.execute(uri: path, method: route.method, headers: harness.base.headers(route.allowed), body: ByteBuffer(string: body)) { response in
                #expect(response.status == route.success, "\(response.text)")
            }
        }
    }

    struct TemplateRefusal: Sendable, CustomTestStringConvertible {
        var name: String
        var body: @Sendable () throws -> String
        var field: String
        var testDescription: String { name }
    }

    static let templateRefusals: [TemplateRefusal] = [
        TemplateRefusal(name: "no icon", body: { try PassHarness.templateJSON(images: ["logo.png": PassHarness.png]) }, field: "images.icon.png"),
        TemplateRefusal(name: "not base64", body: { try PassHarness.templateJSON(images: ["icon.png": PassHarness.png, "logo.png": "%%%"]) }, field: "images.logo.png"),
        TemplateRefusal(name: "not a PNG", body: { try PassHarness.templateJSON(images: ["icon.png": PassHarness.png, "logo.png": Data("GIF89a".utf8).base64EncodedString()]) }, field: "images.logo.png"),
        TemplateRefusal(name: "path out of the package", body: { try PassHarness.templateJSON(images: ["icon.png": PassHarness.png, "../logo.png": PassHarness.png]) }, field: "images.../logo.png"),
        TemplateRefusal(name: "too large an image", body: {
            var big = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            big.append(Data(count: 600 * 1024))
            return try PassHarness.templateJSON(images: ["icon.png": PassHarness.png, "strip.png": big.base64EncodedString()])
        }, field: "images.strip.png"),
        TemplateRefusal(name: "serial set", body: { try PassHarness.templateJSON(pass: ["serialNumber": "1"]) }, field: "pass.serialNumber"),
        TemplateRefusal(name: "beacons set", body: { try PassHarness.templateJSON(pass: ["beacons": [Any]()]) }, field: "pass.beacons"),
        TemplateRefusal(name: "format version 2", body: { try PassHarness.templateJSON(pass: ["formatVersion": 2]) }, field: "pass.formatVersion"),
        TemplateRefusal(name: "no pass type", body: { try PassHarness.templateJSON(pass: ["passTypeIdentifier": ""]) }, field: "pass.passTypeIdentifier"),
        TemplateRefusal(name: "bad colour", body: { try PassHarness.templateJSON(pass: ["backgroundColor": "blue"]) }, field: "pass.backgroundColor"),
        TemplateRefusal(name: "unknown key", body: { try PassHarness.templateJSON(extra: ["fields": [String: Any]()]) }, field: "fields"),
        TemplateRefusal(name: "not JSON", body: { "{pass" }, field: "body"),
    ]

    @Test(arguments: templateRefusals)
    func templateRefusalsNameTheField(refusal: TemplateRefusal) async throws {
        try await PassHarness.with(template: false) { harness, client in
            try await client.execute(uri: harness.templatePath, method: .put, headers: harness.base.headers(.operator),
                                     body: ByteBuffer(string: try refusal.body())) { response in
                #expect(response.status == .unprocessableContent, "\(response.text)")
                #expect(response.errorField == refusal.field, "\(response.text)")
            }
            try await client.execute(uri: harness.templatePath, method: .get, headers: harness.base.headers(.operator)) { response in
                #expect(response.status == .notFound, "a refused template is not stored")
            }
        }
    }

    @Test func templateReadsBackAsStored() async throws {
        try await PassHarness.with { harness, client in
            try await client.execute(uri: harness.templatePath, method: .get, headers: harness.base.headers(.readOnly)) { response in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                let images = try #require(object["images"] as? [String: String])
                #expect(images.keys.sorted() == ["icon.png", "logo.png"])
                #expect(images["icon.png"] == PassHarness.png)
                let pass = try #require(object["pass"] as? [String: Any])
                #expect(pass["passTypeIdentifier"] as? String == PassTestCertificates.passTypeIdentifier)
            }
        }
    }

    @Test func issuedPassCarriesTheEntranceBeaconsAndItsWebService() async throws {
        try await PassHarness.with { harness, client in
            let (pass, package) = try await harness.issue(client, visitor: "Ada Lovelace")
            let site = harness.base.office.site
            let expected = harness.entrances.map { BeaconIdentity(uuid: site.uuid, major: site.major, minor: $0.minor) }
            #expect(pass.beacons.map(\.identity) == expected)
            #expect(pass.version == 1)
            #expect(pass.visitor == "Ada Lovelace")
            let report = try await PassInspection.inspect(package, trustRoots: [harness.certificates.wwdr])
            #expect(report.serialNumber == pass.serial)
            #expect(report.beacons == expected.map { "\($0.uuid.uuidString):\($0.major):\($0.minor)" })
            let object = try PassHarness.passObject(package)
            #expect(object["webServiceURL"] as? String == PassTestCertificates.publicURL + "/wallet")
            let token = try #require(object["authenticationToken"] as? String)
            #expect(token.count >= PassValidation.minimumAuthenticationTokenLength)
            let beacons = try #require(object["beacons"] as? [[String: Any]])
            #expect(beacons.first?["relevantText"] as? String == "Bloomington Office – North door")
            #expect(package.files["logo.png"] == Data(base64Encoded: PassHarness.png))

            let (other, otherPackage) = try await harness.issue(client, visitor: "Grace", zones: [harness.mordorZone.id])
            #expect(other.serial != pass.serial)
            #expect(other.beacons.map(\.minor) == [harness.mordorZone.minor])
            #expect(try PassHarness.passObject(otherPackage)["authenticationToken"] as? String != token)
        }
    }

    struct IssueRefusal: Sendable, CustomTestStringConvertible {
        var name: String
        var body: String
        var field: String
        var status: HTTPResponse.Status = .unprocessableContent
        var testDescription: String { name }
    }

    static let issueRefusals: [IssueRefusal] = [
        IssueRefusal(name: "eleven zones", body: #"{"visitor":"Ada","zones":[1,2,3,4,5,6,7,8,9,10,11]}"#, field: "zones"),
        IssueRefusal(name: "no zones", body: #"{"visitor":"Ada","zones":[]}"#, field: "zones"),
        IssueRefusal(name: "unknown zone", body: #"{"visitor":"Ada","zones":[99999]}"#, field: "zones[0]"),
        IssueRefusal(name: "zone twice", body: #"{"visitor":"Ada","zones":[ZONE,ZONE]}"#, field: "zones[1]"),
        IssueRefusal(name: "empty visitor", body: #"{"visitor":"  "}"#, field: "visitor"),
        IssueRefusal(name: "no visitor", body: #"{"zones":[1]}"#, field: "visitor", status: .badRequest),
        IssueRefusal(name: "zones not numbers", body: #"{"visitor":"Ada","zones":["door"]}"#, field: "zones[0]", status: .badRequest),
    ]

    @Test(arguments: issueRefusals)
    func issueRefusalsNameTheField(refusal: IssueRefusal) async throws {
        try await PassHarness.with { harness, client in
            let body = refusal.body.replacingOccurrences(of: "ZONE", with: String(harness.mordorZone.id))
            try await client.execute(uri: harness.passesPath, method: .post, headers: harness.base.headers(.operator), body: ByteBuffer(string: body)) { response in
                #expect(response.status == refusal.status, "\(response.text)")
                #expect(response.errorField == refusal.field, "\(response.text)")
            }
            try await client.execute(uri: harness.passesPath, method: .get, headers: harness.base.headers(.readOnly)) { response in
                let passes = try response.json([IssuedPass].self)
                #expect(passes.isEmpty, "a refused pass is not stored")
            }
        }
    }

    @Test func aSiteWithoutEntranceNeedsZones() async throws {
        try await PassHarness.with { harness, client in
            let store = harness.base.server.store
            let other = try await store.createSite(NewSite(organisationID: harness.base.office.organisation.id, name: "Annex"))
            try await client.execute(uri: "/v1/sites/\(other.id)/pass-template", method: .put, headers: harness.base.headers(.operator),
                                     body: ByteBuffer(string: try PassHarness.templateJSON())) { #expect($0.status == .ok) }
            try await client.execute(uri: "/v1/sites/\(other.id)/passes", method: .post, headers: harness.base.headers(.operator),
                                     body: ByteBuffer(string: #"{"visitor":"Ada"}"#)) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == "zones")
            }
        }
    }

    @Test func withoutASigningIdentityPassesAnswer503() async throws {
        try await PassHarness.with(signing: false) { harness, client in
            try await client.execute(uri: harness.passesPath, method: .post, headers: harness.base.headers(.operator),
                                     body: ByteBuffer(string: #"{"visitor":"Ada"}"#)) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.errorField == "passes")
                #expect(response.text.contains("--pass-cert"))
            }
            // Authentication first: without a token (or the pass's own) the answer is 401, which
            // tells nothing of the server's configuration.
            try await client.execute(uri: harness.passesPath, method: .post, headers: harness.base.headers(nil),
                                     body: ByteBuffer(string: #"{"visitor":"Ada"}"#)) { response in
                #expect(response.status == .unauthorized)
            }
            let registration = "/wallet/v1/devices/device1/registrations/\(PassTestCertificates.passTypeIdentifier)/abc"
            for (uri, method) in [("/wallet/v1/passes/\(PassTestCertificates.passTypeIdentifier)/abc", HTTPRequest.Method.get),
                                  (registration, .post), (registration, .delete)] {
                try await client.execute(uri: uri, method: method, body: ByteBuffer(string: #"{"pushToken":"abc"}"#)) { response in
                    #expect(response.status == .unauthorized, "\(method) \(uri)")
                }
            }
            // The routes Wallet calls without a pass's token still say the service is not configured.
            try await client.execute(uri: "/wallet/v1/log", method: .post, body: ByteBuffer(string: #"{"logs":["x"]}"#)) { response in
                #expect(response.status == .serviceUnavailable)
            }
        }
    }

    @Test func renumberingRefusalsNameTheField() async throws {
        try await PassHarness.with { harness, client in
            let path = "/v1/zones/\(harness.mordorZone.id)/minor"
            let taken = harness.entrances[0].minor
            for (body, field, status) in [(#"{"minor":3005}"#, "minor", HTTPResponse.Status.unprocessableContent),
                                          (#"{"minor":70000}"#, "minor", .badRequest),
                                          ("{\"minor\":\(harness.mordorZone.minor)}", "minor", .unprocessableContent)] {
                try await client.execute(uri: path, method: .put, headers: harness.base.headers(.operator), body: ByteBuffer(string: body)) { response in
                    #expect(response.status == status, "\(body): \(response.text)")
                    #expect(response.errorField == field, "\(body): \(response.text)")
                }
            }
            try await client.execute(uri: "/v1/zones/\(harness.entrances[1].id)/minor", method: .put, headers: harness.base.headers(.operator),
                                     body: ByteBuffer(string: "{\"minor\":\(taken)}")) { response in
                #expect(response.status == .conflict)
                #expect(response.errorField == "minor")
            }
            try await client.execute(uri: "/v1/zones/99999/minor", method: .put, headers: harness.base.headers(.operator),
                                     body: ByteBuffer(string: #"{"minor":1009}"#)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "id")
            }
        }
    }

    @Test func openAPIDocumentsThePassRoutesAndAnswers() throws {
        let document = ProximaServer.openAPIDocument
        for path in ["/v1/sites/{id}/pass-template", "/v1/sites/{id}/passes", "/v1/sites/{id}/passes/{serial}", "/v1/zones/{id}/minor",
                     "/wallet/v1/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}/{serialNumber}",
                     "/wallet/v1/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}",
                     "/wallet/v1/passes/{passTypeIdentifier}/{serialNumber}", "/wallet/v1/log"] {
            #expect(document.contains("\n  \(path):\n"), "missing \(path)")
        }
        let beacon = CarriedBeacon(uuid: UUID(), major: 1, minor: 2, relevantText: "t")
        let pass = IssuedPass(serial: "s", siteID: 1, passTypeIdentifier: "p", visitor: "v", version: 1, updateTag: 1, createdAt: 1, updatedAt: 1, beacons: [beacon])
        let answers: [(String, any Encodable)] = [
            ("CarriedBeacon", beacon), ("IssuedPass", pass), ("PassIssued", PassIssued(pass: pass, download: "/d")),
            ("ZoneRenumbered", ZoneRenumbered(zone: Zone(id: 1, siteID: 1, minor: 1, label: "l", category: 0, position: Position(x: 0, y: 0)), reissuedPasses: [])),
        ]
        for (name, value) in answers {
            let schema = try OpenAPIContractTests.Schema(named: name, in: document)
            let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
            #expect(Set(object.keys) == schema.required, "\(name): carries \(object.keys.sorted()), documents \(schema.required.sorted())")
        }
        let newPass = try OpenAPIContractTests.Schema(named: "NewPass", in: document)
        #expect(newPass.required == ["visitor"])
        #expect(throws: (any Error).self) { try JSONDecoder().decode(NewPass.self, from: Data(#"{"zones":[1]}"#.utf8)) }
        #expect(try JSONDecoder().decode(NewPass.self, from: Data(#"{"visitor":"a"}"#.utf8)).zones == nil)
    }

    /// `proxima serve` loads the identity at start; a wrong file or URL names its option.
    @Test func signingConfigurationRefusalsNameTheOption() throws {
        let certificates = try PassTestCertificates.make()
        let other = try PassTestCertificates.make()
        func field(_ body: () throws -> PassServiceConfiguration) -> String? {
            do { _ = try body(); return nil } catch let error as PassError { return error.field } catch { return "\(error)" }
        }
        #expect(field { try PassServiceConfiguration(certificatePEM: certificates.passPEM, privateKeyPEM: certificates.passKeyPEM,
                                                     intermediatePEM: certificates.wwdrPEM, publicURL: "http://beacons.example.test") } == "--public-url")
        #expect(field { try PassServiceConfiguration(certificatePEM: certificates.passPEM, privateKeyPEM: other.passKeyPEM,
                                                     intermediatePEM: certificates.wwdrPEM, publicURL: PassTestCertificates.publicURL) } == "--pass-key")
        // A CA that did not issue the pass certificate. (PassSigningIdentity compares names only,
        // so a second CA with the WWDR's very name would pass this check.)
        let unrelatedCA = try other.serverCA.serializeAsPEM().pemString
        #expect(field { try PassServiceConfiguration(certificatePEM: certificates.passPEM, privateKeyPEM: certificates.passKeyPEM,
                                                     intermediatePEM: unrelatedCA, publicURL: PassTestCertificates.publicURL) } == "--pass-wwdr")
        #expect(field { try PassServiceConfiguration(certificatePEM: "not a certificate", privateKeyPEM: certificates.passKeyPEM,
                                                     intermediatePEM: certificates.wwdrPEM, publicURL: PassTestCertificates.publicURL) } == "--pass-cert")
        let configuration = try certificates.passConfiguration()
        #expect(configuration.webServiceURL == "https://beacons.example.test/wallet")
    }
}
