@testable import BeaconServer
import BeaconKit
import BeaconWallet
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 17, item 4: Apple's pass web service under /wallet: registering and unregistering a
/// device, updated serials by tag, the latest pass with Last-Modified / If-Modified-Since,
/// ApplePass authentication, the log; and a changed beacon re-versions exactly its passes.
@Suite("Wallet web service")
struct WalletServiceTests {
    static let passType = PassTestCertificates.passTypeIdentifier
    static let device = "a1b2c3d4e5f60718293a4b5c6d7e8f90"

    static func registrationPath(_ serial: String, device: String = device) -> String {
        "/wallet/v1/devices/\(device)/registrations/\(passType)/\(serial)"
    }

    static func serialsPath(since: String? = nil) -> String {
        "/wallet/v1/devices/\(device)/registrations/\(passType)" + (since.map { "?passesUpdatedSince=\($0)" } ?? "")
    }

    struct SerialNumbers: Decodable {
        var serialNumbers: [String]
        var lastUpdated: String
    }

    @Test func registerListFetchAndUnregister() async throws {
        try await PassHarness.with { harness, client in
            let (pass, package) = try await harness.issue(client)
            let authorization = try PassHarness.authorization(package)
            let register = ByteBuffer(string: #"{"pushToken":"0f1e2d3c4b5a69788796a5b4c3d2e1f0"}"#)
            try await client.execute(uri: Self.registrationPath(pass.serial), method: .post, headers: authorization, body: register) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: Self.registrationPath(pass.serial), method: .post, headers: authorization, body: register) { response in
                #expect(response.status == .ok, "a second registration of the same device is 200")
            }
            let list = try await client.execute(uri: Self.serialsPath(), method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text.contains(#""lastUpdated":""#), "lastUpdated is a string: \(response.text)")
                return try response.json(SerialNumbers.self)
            }
            #expect(list.serialNumbers == [pass.serial])
            try await client.execute(uri: Self.serialsPath(since: list.lastUpdated), method: .get) { response in
                #expect(response.status == .noContent, "nothing changed since the tag")
            }
            try await client.execute(uri: Self.serialsPath(since: "yesterday"), method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "passesUpdatedSince")
            }

            let passPath = "/wallet/v1/passes/\(Self.passType)/\(pass.serial)"
            let lastModified = try await client.execute(uri: passPath, method: .get, headers: authorization) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/vnd.apple.pkpass")
                let latest = try PassPackage.read(zip: Data(buffer: response.body))
                #expect(try PassHarness.passObject(latest)["serialNumber"] as? String == pass.serial)
                return try #require(response.headers[.lastModified])
            }
            #expect(HTTPDate.parse(lastModified) == pass.updatedAt.rounded(.down))
            var conditional = authorization
            conditional[.ifModifiedSince] = lastModified
            try await client.execute(uri: passPath, method: .get, headers: conditional) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
            conditional[.ifModifiedSince] = HTTPDate.format(pass.updatedAt - 60)
            try await client.execute(uri: passPath, method: .get, headers: conditional) { response in
                #expect(response.status == .ok, "modified since a minute before it was issued")
            }

            try await client.execute(uri: Self.registrationPath(pass.serial), method: .delete, headers: authorization) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: Self.serialsPath(), method: .get) { response in
                #expect(response.status == .noContent, "an unregistered device has no passes")
            }
        }
    }

    @Test func wrongAuthenticationTokenIs401() async throws {
        try await PassHarness.with { harness, client in
            let (pass, package) = try await harness.issue(client)
            let (other, _) = try await harness.issue(client, visitor: "Grace")
            let register = ByteBuffer(string: #"{"pushToken":"0f1e2d3c4b5a6978"}"#)
            let wrong: [HTTPFields] = [
                [:],
                [.authorization: "ApplePass not-the-token-of-this-pass"],
                [.authorization: "Bearer \(harness.base.tokens[.admin]!)"],
                // The right token for another pass.
                try PassHarness.authorization(package),
            ]
            for (index, headers) in wrong.enumerated() {
                let serial = index == 3 ? other.serial : pass.serial
                for (method, path) in [(HTTPRequest.Method.post, Self.registrationPath(serial)), (.delete, Self.registrationPath(serial)),
                                       (.get, "/wallet/v1/passes/\(Self.passType)/\(serial)")] {
                    try await client.execute(uri: path, method: method, headers: headers, body: register) { response in
                        #expect(response.status == .unauthorized, "\(method) \(path) with header set \(index)")
                        #expect(response.headers[.wwwAuthenticate] == "ApplePass")
                        #expect(response.errorField == "Authorization")
                    }
                }
            }
            // Right token, wrong pass type: still 401, so the service tells nothing of other types.
            try await client.execute(uri: "/wallet/v1/passes/pass.com.example.other/\(pass.serial)", method: .get,
                                     headers: try PassHarness.authorization(package)) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: Self.serialsPath(), method: .get) { response in
                #expect(response.status == .noContent, "refused registrations registered nothing")
            }
        }
    }

    @Test func refusedValuesNameTheField() async throws {
        try await PassHarness.with { harness, client in
            let (pass, package) = try await harness.issue(client)
            let authorization = try PassHarness.authorization(package)
            let cases: [(String, String, String)] = [
                (Self.registrationPath(pass.serial), #"{"pushToken":""}"#, "pushToken"),
                (Self.registrationPath(pass.serial), #"{"pushToken":"with space"}"#, "pushToken"),
                (Self.registrationPath(pass.serial), #"{}"#, "pushToken"),
                (Self.registrationPath(pass.serial, device: "bad%20device"), #"{"pushToken":"abc"}"#, "deviceLibraryIdentifier"),
                (Self.registrationPath(String(repeating: "s", count: 201)), #"{"pushToken":"abc"}"#, "serialNumber"),
            ]
            for (path, body, field) in cases {
                try await client.execute(uri: path, method: .post, headers: authorization, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(path) \(body): \(response.text)")
                    #expect(response.errorField == field, "\(path) \(body): \(response.text)")
                }
            }
        }
    }

    @Test func logIsAcceptedAndBounded() async throws {
        try await PassHarness.with { _, client in
            try await client.execute(uri: "/wallet/v1/log", method: .post, headers: [.contentType: "application/json"],
                                     body: ByteBuffer(string: #"{"logs":["Web service error for pass.com.example.proxima (https://beacons.example.test/wallet): Response to 'What changed?' request included 1 serial numbers but the lastUpdated tag (1) remained the same."]}"#)) { response in
                #expect(response.status == .ok)
            }
            let many = "{\"logs\":[" + Array(repeating: "\"x\"", count: 51).joined(separator: ",") + "]}"
            try await client.execute(uri: "/wallet/v1/log", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: many)) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorField == "logs")
            }
            let huge = "{\"logs\":[\"" + String(repeating: "y", count: 200_000) + "\"]}"
            try await client.execute(uri: "/wallet/v1/log", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: huge)) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorField == "body")
            }
        }
    }

    /// Three passes: A carries the north door, B carries Mordor, C carries the south door and
    /// Mordor. Renumbering Mordor re-versions B and C only; the device registered for all three
    /// is told B and C changed, gets a push queued, and fetches B's new beacons.
    @Test func changingABeaconReversionsExactlyThePassesThatCarryIt() async throws {
        try await PassHarness.with { harness, client in
            let north = harness.entrances[0], south = harness.entrances[1], mordor = harness.mordorZone
            let (a, packageA) = try await harness.issue(client, visitor: "A", zones: [north.id])
            let (b, packageB) = try await harness.issue(client, visitor: "B", zones: [mordor.id])
            let (c, packageC) = try await harness.issue(client, visitor: "C", zones: [south.id, mordor.id])
            for (pass, package) in [(a, packageA), (b, packageB), (c, packageC)] {
                try await client.execute(uri: Self.registrationPath(pass.serial), method: .post, headers: try PassHarness.authorization(package),
                                         body: ByteBuffer(string: #"{"pushToken":"feedface00112233"}"#)) { #expect($0.status == .created) }
            }
            let before = try await client.execute(uri: Self.serialsPath(), method: .get) { try $0.json(SerialNumbers.self) }
            #expect(Set(before.serialNumbers) == [a.serial, b.serial, c.serial])

            let renumbered = try await client.execute(uri: "/v1/zones/\(mordor.id)/minor", method: .put, headers: harness.base.headers(.operator),
                                                      body: ByteBuffer(string: #"{"minor":1042}"#)) { response in
                #expect(response.status == .ok, "\(response.text)")
                return try response.json(ZoneRenumbered.self)
            }
            #expect(renumbered.zone.minor == 1042)
            #expect(Set(renumbered.reissuedPasses) == [b.serial, c.serial])

            let after = try await client.execute(uri: Self.serialsPath(since: before.lastUpdated), method: .get) { response in
                #expect(response.status == .ok)
                return try response.json(SerialNumbers.self)
            }
            #expect(Set(after.serialNumbers) == [b.serial, c.serial])
            #expect(Int(after.lastUpdated)! > Int(before.lastUpdated)!)
            try await client.execute(uri: Self.serialsPath(since: after.lastUpdated), method: .get) { #expect($0.status == .noContent) }

            let passes = try await client.execute(uri: harness.passesPath, method: .get, headers: harness.base.headers(.readOnly)) {
                try $0.json([IssuedPass].self)
            }
            let versions = Dictionary(uniqueKeysWithValues: passes.map { ($0.serial, $0.version) })
            #expect(versions == [a.serial: 1, b.serial: 2, c.serial: 2])
            let reissuedC = try #require(passes.first { $0.serial == c.serial })
            #expect(reissuedC.beacons.map(\.minor) == [south.minor, 1042])

            var conditional = try PassHarness.authorization(packageC)
            conditional[.ifModifiedSince] = HTTPDate.format(c.updatedAt)
            try await client.execute(uri: "/wallet/v1/passes/\(Self.passType)/\(c.serial)", method: .get, headers: conditional) { response in
                #expect(response.status == .ok, "the new version is newer than the one the device has")
                let latest = try PassPackage.read(zip: Data(buffer: response.body))
                let beacons = try #require(try PassHarness.passObject(latest)["beacons"] as? [[String: Any]])
                #expect(beacons.compactMap { ($0["minor"] as? NSNumber)?.intValue } == [Int(south.minor), 1042])
                #expect(try PassHarness.passObject(latest)["authenticationToken"] as? String
                        == PassHarness.passObject(packageC)["authenticationToken"] as? String, "Wallet never lets the token change")
            }
            var unchanged = try PassHarness.authorization(packageA)
            unchanged[.ifModifiedSince] = HTTPDate.format(a.updatedAt)
            try await client.execute(uri: "/wallet/v1/passes/\(Self.passType)/\(a.serial)", method: .get, headers: unchanged) {
                #expect($0.status == .notModified)
            }
            let pushes = try await harness.base.server.store.queuedPushes()
            #expect(pushes.map(\.pushToken) == ["feedface00112233"], "one push for the one device, however many of its passes changed")
            #expect(pushes.first?.passTypeIdentifier == Self.passType)
        }
    }
}

/// The same re-versioning on the store, on SQLite and PostgreSQL.
@Suite("Pass store")
struct PassStoreTests {
    @Test(arguments: TestBackend.available)
    func reissueTouchesOnlyPassesCarryingTheOldIdentity(backend: TestBackend) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let site = office.site
            let restroom = try await store.addBeacon(NewBeacon(siteID: site.id, category: 2, label: "Restroom", position: Position(x: 3, y: 3)))
            func pass(_ name: String, minors: [UInt16]) -> StoredPass {
                StoredPass(pass: IssuedPass(serial: name, siteID: site.id, passTypeIdentifier: "pass.test", visitor: name, version: 1, updateTag: 0,
                                            createdAt: 100, updatedAt: 100.5,
                                            beacons: minors.map { CarriedBeacon(uuid: site.uuid, major: site.major, minor: $0, relevantText: "here") }),
                           authenticationToken: String(repeating: "t", count: 20))
            }
            let one = try await store.insertPass(pass("one", minors: [office.mordor.minor]))
            let two = try await store.insertPass(pass("two", minors: [restroom.minor]))
            let three = try await store.insertPass(pass("three", minors: [restroom.minor, office.mordor.minor]))
            #expect([one.updateTag, two.updateTag, three.updateTag] == [Int](1...3))
            _ = try await store.registerDevice(PassRegistration(deviceLibraryIdentifier: "d", passTypeIdentifier: "pass.test", serial: "three", pushToken: "p3"), now: 100)
            _ = try await store.registerDevice(PassRegistration(deviceLibraryIdentifier: "d", passTypeIdentifier: "pass.test", serial: "two", pushToken: "p2"), now: 100)

            let zones = try await store.zones(siteID: site.id)
            let mordorZone = try #require(zones.first { $0.minor == office.mordor.minor })
            let result = try await store.renumberZone(id: mordorZone.id, minor: 1077, now: 100.2)
            #expect(result.reissuedPasses == ["one", "three"])
            let stored = try await store.issuedPasses(siteID: site.id)
            let byName = Dictionary(uniqueKeysWithValues: stored.map { ($0.serial, $0) })
            #expect(byName["one"]?.version == 2)
            #expect(byName["two"]?.version == 1)
            #expect(byName["three"]?.version == 2)
            #expect(byName["three"]?.beacons.map(\.minor) == [restroom.minor, 1077])
            #expect(byName["two"]?.updateTag == 2)
            #expect(Set([byName["one"]!.updateTag, byName["three"]!.updateTag]) == [4, 5])
            // Whole seconds move on even when the clock has not, so Last-Modified changes.
            #expect(byName["one"]?.updatedAt == 101)
            #expect(try await store.beacons(siteID: site.id).contains { $0.minor == 1077 })
            let updated = try await store.updatedSerials(deviceLibraryIdentifier: "d", passTypeIdentifier: "pass.test", since: 3)
            #expect(updated?.serials == ["three"])
            #expect(try await store.queuedPushes().map(\.pushToken) == ["p3"])
        }
    }
}
