import AsyncHTTPClient
import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import Logging
import NIOCore
import Testing

@Suite("Webhooks")
struct WebhookTests {
    /// Records deliveries; refuses the first one so the dispatcher has to retry.
    actor Receiver {
        var attempts: [(signature: String, attempt: String, body: [UInt8])] = []
        func record(signature: String, attempt: String, body: [UInt8]) -> Bool {
            attempts.append((signature, attempt, body))
            return attempts.count > 1
        }
    }

    static func header(_ request: Request, _ name: String) -> String {
        request.headers.first(where: { $0.name.canonicalName == name })?.value ?? ""
    }

    @Test func enterAndExitAreDeliveredSignedAndRetried() async throws {
        let receiver = Receiver()
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let accepted = await receiver.record(signature: Self.header(request, "x-proxima-signature"),
                                                 attempt: Self.header(request, "x-proxima-attempt"),
                                                 body: Array(buffer: body))
            return Response(status: accepted ? .noContent : .serviceUnavailable)
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) })
        let serving = Task { try await app.run() }
        defer { serving.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let secret = "a-webhook-secret-of-some-length"
            _ = try await store.addWebhook(url: "http://127.0.0.1:\(port)/hook", secret: secret, siteID: office.site.id)
            let (gateway, _) = try await store.registerGateway(name: "door")
            let sighting = Sighting(time: 5, receiver: "door", address: BluetoothAddress(rawValue: 1), rssi: -60,
                                    frame: .iBeacon(IBeaconFrame(identity: office.mordor.identity)))
            let result = try await IngestService(store: store, instance: "t", clock: { sighting.time }).ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: 0, sightings: [sighting]))
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            let dispatcher = WebhookDispatcher(store: store, client: client, attempts: 3, firstPause: .milliseconds(10), logger: Logger(label: "test"))
            await dispatcher.deliver(result.events)
            try await client.shutdown()
        }
        let attempts = await receiver.attempts
        #expect(attempts.count == 2)
        #expect(attempts.map(\.attempt) == ["1", "2"])
        let delivered = try #require(attempts.last)
        #expect(delivered.signature == WebhookDispatcher.signature(body: delivered.body, secret: "a-webhook-secret-of-some-length"))
        #expect(delivered.signature != WebhookDispatcher.signature(body: delivered.body, secret: "another-secret-entirely"))
        struct Delivery: Decodable { var events: [StoredEvent] }
        let events = try JSONDecoder().decode(Delivery.self, from: Data(delivered.body)).events
        #expect(events.map(\.kindName) == ["enter"])
        #expect(events.first?.label == "Bloomington Office – Conference Room: Mordor")
    }

    @Test func webhookURLsAndSecretsAreChecked() async throws {
        try await TestBackend.sqlite.withStore { store in
            await #expect(throws: RegistryError.self) { try await store.addWebhook(url: "ftp://x/y", secret: String(repeating: "s", count: 20), siteID: nil) }
            await #expect(throws: RegistryError.self) { try await store.addWebhook(url: "http://x/y", secret: "short", siteID: nil) }
            await #expect(throws: RegistryError.self) { try await store.addWebhook(url: "http://x/y", secret: String(repeating: "s", count: 20), siteID: 99) }
        }
    }
}
