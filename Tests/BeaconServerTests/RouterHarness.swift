import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// A server on a fresh SQLite store with one token per role, a registered gateway and the
/// office fixture, called through its router without sockets.
struct RouterHarness: Sendable {
    let server: ProximaServer
    let office: Fixture.Office
    let tokens: [Role: String]
    let gatewayID: String

    /// The server's clock: sightings at small times are within its window.
    static let now = 1_000.0

    static func with<T: Sendable>(configuration: ServerConfiguration = ServerConfiguration(),
                                  _ body: @Sendable (RouterHarness, any TestClientProtocol) async throws -> T) async throws -> T {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            var tokens: [Role: String] = [:]
            for role in [Role.admin, .operator, .readOnly] {
                tokens[role] = try await store.issueToken(name: role.rawValue, role: role).token
            }
            let (gateway, gatewayToken) = try await store.registerGateway(name: "door", siteID: office.site.id)
            tokens[.gateway] = gatewayToken.token
            let server = ProximaServer(store: store, configuration: configuration, clock: { now })
            let harness = RouterHarness(server: server, office: office, tokens: tokens, gatewayID: gateway.id)
            let app = Application(router: server.makeRouter())
            // Webhook deliveries are a service of the server's group; here the harness runs it.
            let webhooks = Task { await server.webhooks.run() }
            let result: T
            do {
                result = try await app.test(.router) { client in try await body(harness, client) }
            } catch {
                webhooks.cancel()
                await webhooks.value
                await server.shutdown()
                throw error
            }
            webhooks.cancel()
            await webhooks.value
            await server.shutdown()
            return result
        }
    }

    func headers(_ role: Role?, contentType: String = "application/json") -> HTTPFields {
        var fields: HTTPFields = [.contentType: contentType]
        if let role, let token = tokens[role] { fields[.authorization] = "Bearer \(token)" }
        return fields
    }

    func sighting(_ time: Double, identity: BeaconIdentity? = nil, rssi: Int8? = -65) -> Sighting {
        Sighting(time: time, receiver: "door", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: rssi,
                 frame: .iBeacon(IBeaconFrame(identity: identity ?? office.mordor.identity, measuredPower: MeasuredPower(-59))))
    }

    func batchBody(_ sightings: [Sighting], sequence: Int? = nil) throws -> ByteBuffer {
        ByteBuffer(data: try JSONEncoder().encode(SightingBatch(sequence: sequence, sightings: sightings)))
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    func json<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: Data(buffer: body)) }
    /// The field an API refusal names.
    var errorField: String? {
        struct Body: Decodable {
            struct Detail: Decodable { var field: String; var message: String }
            var error: Detail
        }
        return (try? json(Body.self))?.error.field
    }
}
