import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// A server on a fresh SQLite store with the office fixture, a token per operator role, an
/// enrolment token, the door gateway, and a clock the test moves: for devices and messages of
/// the day (issue 13), called through the router without sockets.
struct AppsHarness: Sendable {
    final class Clock: Sendable {
        private let seconds: Mutex<Double>
        init(_ start: Double) { seconds = Mutex(start) }
        var now: Double { seconds.withLock { $0 } }
        func set(_ time: Double) { seconds.withLock { $0 = time } }
    }

    let server: ProximaServer
    let client: any TestClientProtocol
    let office: Fixture.Office
    let zoneID: Int
    let tokens: [Role: String]
    let gatewayID: String
    let clock: Clock

    /// Monday 23 November 2026, 12:00 UTC.
    static let monday = 1_795_435_200.0

    static func with(configuration: ServerConfiguration = ServerConfiguration(), backend: TestBackend = .sqlite,
                     _ body: @Sendable (AppsHarness) async throws -> Void) async throws {
        try await backend.withStore { store in
            let office = try await Fixture.office(store)
            let zone = try #require(try await store.zones(siteID: office.site.id).first)
            var tokens: [Role: String] = [:]
            for role in [Role.admin, .operator, .readOnly, .enrolment] {
                tokens[role] = try await store.issueToken(name: role.rawValue, role: role).token
            }
            let (gateway, gatewayToken) = try await store.registerGateway(name: "door", siteID: office.site.id)
            tokens[.gateway] = gatewayToken.token
            let clock = Clock(monday)
            let roleTokens = tokens
            let server = ProximaServer(store: store, configuration: configuration, clock: { clock.now })
            let app = Application(router: server.makeRouter())
            try await app.test(.router) { client in
                try await body(AppsHarness(server: server, client: client, office: office, zoneID: zone.id, tokens: roleTokens,
                                           gatewayID: gateway.id, clock: clock))
            }
            await server.shutdown()
        }
    }

    // MARK: Requests

    /// A request with a role's token, a raw token, or none.
    func call(_ method: HTTPRequest.Method, _ path: String, as role: Role? = nil, token: String? = nil, json: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let bearer = token ?? role.flatMap({ tokens[$0] }) { headers[.authorization] = "Bearer \(bearer)" }
        return try await client.executeRequest(uri: path, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    /// Registers a device of the office (enrolment token) and returns it with its token.
    func register(name: String? = "Ann's phone", anonymous: Bool? = nil, positions: Bool = false, siteID: Int? = nil) async throws -> (Device, String) {
        var object: [String: Any] = ["siteID": siteID ?? office.site.id, "consent": ["events": true, "positions": positions]]
        if let name { object["name"] = name }
        if let anonymous { object["anonymous"] = anonymous }
        let body = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let response = try await call(.post, "/v1/devices", as: .enrolment, json: body)
        try #require(response.status == .created, "\(response.status) \(response.text)")
        let registered = try response.json(RegisteredDevice.self)
        return (registered.device, registered.token)
    }

    /// `packets` packets of a beacon, five a second, the last at `time`, posted with a token.
    @discardableResult
    func post(heard identity: BeaconIdentity, at time: Double, token: String, sequence: Int? = nil, packets: Int = 5) async throws -> TestResponse {
        clock.set(time)
        let sightings = (0..<packets).map { step in
            Sighting(time: time - Double(packets - 1 - step) * 0.2, receiver: "phone", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: -60,
                     frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))))
        }
        let body = String(decoding: try JSONEncoder().encode(SightingBatch(sequence: sequence, sightings: sightings)), as: UTF8.self)
        return try await call(.post, "/v1/sightings", token: token, json: body)
    }

    /// A device's stored events as the JSON objects the API sends.
    func eventObjects(deviceID: String, token: String) async throws -> [[String: Any]] {
        let response = try await call(.get, "/v1/devices/\(deviceID)/events?format=json", token: token)
        try #require(response.status == .ok, "\(response.status) \(response.text)")
        return try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]])
    }

    /// Creates a message through the API as an operator; returns its id.
    func createMessage(_ json: String) async throws -> Int {
        let response = try await call(.post, "/v1/messages", as: .operator, json: json)
        try #require(response.status == .created, "\(response.status) \(response.text)")
        return try response.json(SavedDayMessage.self).message.id
    }

    var mordor: BeaconIdentity { office.mordor.identity }

    var lookupPath: String {
        "/v1/messages?uuid=\(mordor.uuid.uuidString)&major=\(mordor.major)&minor=\(mordor.minor)"
    }

    /// Seconds since 1970 of a local wall-clock time in a time zone.
    static func time(_ text: String, in zone: String) throws -> Double {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: zone)
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return try #require(formatter.date(from: text), "bad test time \(text)").timeIntervalSince1970
    }
}
