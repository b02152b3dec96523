import BeaconFleet
import BeaconKit
import BeaconRotation
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing

/// Rotating identities on the server (docs/security.md, "Rotating identities"): the rotation
/// routes by role, refusals naming their field, keys sealed at rest, the window rule through
/// `GET /v1/resolve` and ingestion, and yesterday's identity raising a `rotationReplay` alert.
@Suite("Rotation server")
struct RotationServerTests {
    /// 2024-10-04T02:00:00Z: two hours into period 20,000 of 24 h, past the hour of grace.
    static let today = 20_000.0 * 86_400 + 7_200
    static let keyHex = "000102030405060708090a0b0c0d0e0f"
    static let secret = try! ServerSecret(bytes: Array(repeating: 0x5A, count: 32))

    /// A server clock tests can move.
    final class Time: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Double
        init(_ value: Double) { self.value = value }
        var now: Double { lock.withLock { value } }
        func set(_ time: Double) { lock.withLock { value = time } }
    }

    struct Harness: Sendable {
        var server: ProximaServer
        var office: Fixture.Office
        var tokens: [Role: String]
        var time: Time

        func headers(_ role: Role?) -> HTTPFields {
            var fields: HTTPFields = [.contentType: "application/json"]
            if let role, let token = tokens[role] { fields[.authorization] = "Bearer \(token)" }
            return fields
        }

        var rotating: RotatingIdentity {
            RotatingIdentity(uuid: office.mordor.uuid, key: try! RotationKey(parsing: RotationServerTests.keyHex))
        }

        func resolvePath(_ identity: BeaconIdentity) -> String {
            "/v1/resolve?uuid=\(identity.uuid.uuidString)&major=\(identity.major)&minor=\(identity.minor)"
        }

        func batch(_ identity: BeaconIdentity, at time: Double, sequence: Int) throws -> ByteBuffer {
            let sighting = Sighting(time: time, receiver: "door", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: -60,
                                    frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))))
            return ByteBuffer(data: try JSONEncoder().encode(SightingBatch(sequence: sequence, sightings: [sighting])))
        }
    }

    static func with<T: Sendable>(_ backend: TestBackend = .sqlite, secret: ServerSecret? = Self.secret,
                                  _ body: @Sendable (Harness, any TestClientProtocol) async throws -> T) async throws -> T {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            var tokens: [Role: String] = [:]
            for role in [Role.admin, .operator, .readOnly] {
                tokens[role] = try await store.issueToken(name: role.rawValue, role: role).token
            }
            tokens[.gateway] = try await store.registerGateway(name: "door", siteID: office.site.id).1.token
            var configuration = ServerConfiguration()
            configuration.secretKey = secret
            let time = Time(today)
            let server = ProximaServer(store: store, configuration: configuration, clock: { time.now })
            let harness = Harness(server: server, office: office, tokens: tokens, time: time)
            let result = try await Application(router: server.makeRouter()).test(.router) { client in try await body(harness, client) }
            await server.shutdown()
            return result
        }
    }

    struct Route: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var expected: HTTPResponse.Status
        var testDescription: String { "\(method) /v1/beacons/{id}/rotation" }
    }

    @Test(arguments: [Route(method: .put, expected: .ok), Route(method: .get, expected: .ok), Route(method: .delete, expected: .noContent)])
    func rotationRoutesRefuseNoTokenAndWrongRolesAndAdmitOperators(_ route: Route) async throws {
        try await Self.with { harness, client in
            let path = "/v1/beacons/\(harness.office.mordor.id)/rotation"
            let body = ByteBuffer(string: #"{"key":"\#(Self.keyHex)","period":"24h"}"#)
            if route.method != .put {
                try await client.execute(uri: path, method: .put, headers: harness.headers(.admin), body: body) { #expect($0.status == .ok) }
            }
            try await client.execute(uri: path, method: route.method, headers: harness.headers(nil), body: body) { response in
                #expect(response.status == .unauthorized)
                #expect(response.errorField == "Authorization")
            }
            for wrong in [Role.readOnly, .gateway] {
                try await client.execute(uri: path, method: route.method, headers: harness.headers(wrong), body: body) { response in
                    #expect(response.status == .forbidden, "\(wrong)")
                    #expect(response.errorField == "Authorization")
                }
            }
            try await client.execute(uri: path, method: route.method, headers: harness.headers(.operator), body: body) { response in
                #expect(response.status == route.expected, "\(response.text)")
                #expect(!response.text.contains(Self.keyHex))
            }
        }
    }

    @Test func refusedValuesNameTheirField() async throws {
        try await Self.with { harness, client in
            let path = "/v1/beacons/\(harness.office.mordor.id)/rotation"
            let cases: [(String, String, HTTPResponse.Status, String)] = [
                (path, #"{"key":"0011"}"#, .unprocessableContent, "key"),
                (path, #"{"key":"zz!not-a-key"}"#, .unprocessableContent, "key"),
                (path, #"{"key":"\#(Self.keyHex)","period":"30s"}"#, .unprocessableContent, "period"),
                (path, #"{"key":"\#(Self.keyHex)","period":"often"}"#, .unprocessableContent, "period"),
                (path, #"{"period":"24h"}"#, .badRequest, "key"),
                ("/v1/beacons/9999/rotation", #"{"key":"\#(Self.keyHex)"}"#, .notFound, "id"),
                ("/v1/beacons/x/rotation", #"{"key":"\#(Self.keyHex)"}"#, .badRequest, "id"),
            ]
            for (uri, body, status, field) in cases {
                try await client.execute(uri: uri, method: .put, headers: harness.headers(.admin), body: ByteBuffer(string: body)) { response in
                    #expect(response.status == status, "\(body): \(response.text)")
                    #expect(response.errorField == field, "\(body): \(response.text)")
                }
            }
            try await client.execute(uri: path, method: .get, headers: harness.headers(.admin)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "id")
            }
        }
    }

    @Test func withoutASecretKeyFileKeysAreRefused() async throws {
        try await Self.with(secret: nil) { harness, client in
            try await client.execute(uri: "/v1/beacons/\(harness.office.mordor.id)/rotation", method: .put, headers: harness.headers(.admin),
                                     body: ByteBuffer(string: #"{"key":"\#(Self.keyHex)"}"#)) { response in
                #expect(response.status == .conflict)
                #expect(response.errorField == "key")
                #expect(response.text.contains("--secret-key-file"))
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func keysAreSealedAtRestAndNeverReturned(_ backend: TestBackend) async throws {
        let keyBytes = (0..<32).map { UInt8(0xA0 ^ $0) }
        let keyBase64 = Data(keyBytes).base64EncodedString()
        let keyHex = keyBytes.map { String(format: "%02x", $0) }.joined()
        try await Self.with(backend) { harness, client in
            let path = "/v1/beacons/\(harness.office.mordor.id)/rotation"
            try await client.execute(uri: path, method: .put, headers: harness.headers(.operator),
                                     body: ByteBuffer(string: #"{"key":"\#(keyBase64)","period":3600}"#)) { response in
                #expect(response.status == .ok)
                let settings = try response.json(RotationSettings.self)
                #expect(settings.periodSeconds == 3_600)
                #expect(settings.keyFingerprint == (try RotationKey(bytes: keyBytes)).fingerprint)
                #expect(settings.currentPeriod == Int64(Self.today / 3_600))
                #expect(!response.text.contains(keyBase64) && !response.text.lowercased().contains(keyHex))
            }
            try await client.execute(uri: path, method: .get, headers: harness.headers(.admin)) { response in
                #expect(response.status == .ok)
                #expect(!response.text.contains(keyBase64) && !response.text.lowercased().contains(keyHex))
            }
            let stored = try await harness.server.store.database.read { db in
                try await db.raw("SELECT sealed_key, key_fingerprint FROM beacon_rotations").all().map {
                    (try $0.decode(column: "sealed_key", as: String.self), try $0.decode(column: "key_fingerprint", as: String.self))
                }
            }
            let (sealed, _) = try #require(stored.first)
            #expect(!sealed.contains(keyBase64) && !sealed.lowercased().contains(keyHex))
            let box = try #require(Data(base64Encoded: sealed))
            #expect(box.count == 12 + 32 + 16, "nonce, ciphertext, tag")
            #expect(!Self.contains(Array(box), keyBytes))
            if case .sqliteFile(let file) = harness.server.store.database.location {
                for suffix in ["", "-wal"] {
                    guard let raw = FileManager.default.contents(atPath: file + suffix) else { continue }
                    #expect(!Self.contains(Array(raw), keyBytes), "raw key bytes in \(file + suffix)")
                    #expect(!Self.contains(Array(raw), Array(keyHex.utf8)) && !Self.contains(Array(raw), Array(keyBase64.utf8)))
                }
            }
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test(arguments: TestBackend.available)
    func currentAndNextResolveAndYesterdayIsAReplay(_ backend: TestBackend) async throws {
        try await Self.with(backend) { harness, client in
            let path = "/v1/beacons/\(harness.office.mordor.id)/rotation"
            try await client.execute(uri: path, method: .put, headers: harness.headers(.admin),
                                     body: ByteBuffer(string: #"{"key":"\#(Self.keyHex)"}"#)) { #expect($0.status == .ok) }
            let rotating = harness.rotating
            for (period, window) in [(Int64(20_000), "current"), (20_001, "next")] {
                try await client.execute(uri: harness.resolvePath(rotating.identity(forPeriod: period)), method: .get,
                                         headers: harness.headers(.readOnly)) { response in
                    #expect(response.status == .ok, "\(response.text)")
                    let resolved = try response.json(ResolvedIdentity.self)
                    #expect(resolved.label == "Bloomington Office – Conference Room: Mordor")
                    #expect(resolved.rotation?.window == window && resolved.rotation?.period == period)
                    #expect(resolved.rotation?.registered == harness.office.mordor.identity)
                }
            }
            let yesterday = rotating.identity(forPeriod: 19_999)
            try await client.execute(uri: harness.resolvePath(yesterday), method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .conflict)
                #expect(response.errorField == "identity")
                #expect(response.text.contains("replay"))
            }
            // Within the hour of grace after midnight yesterday's identity still resolves.
            harness.time.set(20_000.0 * 86_400 + 1_800)
            try await client.execute(uri: harness.resolvePath(yesterday), method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .ok)
                let window = try response.json(ResolvedIdentity.self).rotation?.window
                #expect(window == "previousWithinGrace")
            }
            harness.time.set(Self.today)

            // Today's identity posted by a gateway enters the registered beacon's region.
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway),
                                     body: try harness.batch(rotating.identity(forPeriod: 20_000), at: Self.today - 1, sequence: 1)) { response in
                #expect(response.status == .accepted, "\(response.text)")
            }
            let events = try await harness.server.store.events(after: 0, limit: 100)
            #expect(events.contains { $0.label == "Bloomington Office – Conference Room: Mordor" && $0.kindName == "enter" }, "\(events)")

            // Yesterday's identity replayed today: not resolved, and an alert on the beacon.
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway),
                                     body: try harness.batch(yesterday, at: Self.today, sequence: 2)) { response in
                #expect(response.status == .accepted, "\(response.text)")
            }
            try await client.execute(uri: "/v1/fleet/alerts", method: .get, headers: harness.headers(.readOnly)) { response in
                let alerts = try response.json(FleetAlertList.self).alerts.filter { $0.check == .rotationReplay }
                let alert = try #require(alerts.first, "\(response.text)")
                #expect(alerts.count == 1)
                #expect(alert.level == .alert)
                #expect(alert.subject.name == "\(Fixture.nerderyUUID.uuidString):\(harness.office.mordor.major):\(harness.office.mordor.minor)")
                #expect(alert.reason.contains("period 19999") && alert.reason.contains("replay"), "\(alert.reason)")
                #expect(alert.label == "Bloomington Office – Conference Room: Mordor")
            }
        }
    }

    @Test func deletingTheRotationStopsResolution() async throws {
        try await Self.with { harness, client in
            let path = "/v1/beacons/\(harness.office.mordor.id)/rotation"
            try await client.execute(uri: path, method: .put, headers: harness.headers(.admin),
                                     body: ByteBuffer(string: #"{"key":"\#(Self.keyHex)","period":"15m"}"#)) { #expect($0.status == .ok) }
            let rotating = RotatingIdentity(uuid: harness.office.mordor.uuid, key: try RotationKey(parsing: Self.keyHex),
                                            period: try RotationPeriod(parsing: "15m"))
            let uri = harness.resolvePath(rotating.identity(at: Self.today))
            try await client.execute(uri: uri, method: .get, headers: harness.headers(.readOnly)) { #expect($0.status == .ok) }
            try await client.execute(uri: path, method: .delete, headers: harness.headers(.admin)) { #expect($0.status == .noContent) }
            try await client.execute(uri: uri, method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .notFound, "\(response.text)")
            }
            try await client.execute(uri: path, method: .delete, headers: harness.headers(.admin)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "id")
            }
        }
    }
}
