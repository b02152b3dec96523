import AsyncHTTPClient
import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Testing

@Suite("Webhooks")
struct WebhookTests {
    /// Records deliveries; refuses the first one so the dispatcher has to retry.
    actor Receiver {
        var attempts: [(signature: String, attempt: String, body: [UInt8])] = []
        private var waiting: (count: Int, continuation: CheckedContinuation<Void, Never>)?
        func record(signature: String, attempt: String, body: [UInt8]) -> Bool {
            attempts.append((signature, attempt, body))
            if let waiting, attempts.count >= waiting.count {
                waiting.continuation.resume()
                self.waiting = nil
            }
            return attempts.count > 1
        }

        func waitForAttempts(_ count: Int) async {
            guard attempts.count < count else { return }
            await withCheckedContinuation { waiting = (count, $0) }
        }
    }

    static func header(_ request: Request, _ name: String) -> String {
        request.headers.first(where: { $0.name.canonicalName == name })?.value ?? ""
    }

    // Awaits a condition with no deadline of its own: the limit turns a hang into a failure.
    @Test(.timeLimit(.minutes(10))) func enterAndExitAreDeliveredSignedAndRetried() async throws {
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
            let running = Task { await dispatcher.run() }
            dispatcher.enqueue(result.events)
            await receiver.waitForAttempts(2)
            running.cancel()
            await running.value
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

    /// Holds every request until the test lets them go: a receiver that accepts and never answers.
    actor SilentReceiver {
        var requests = 0
        var firstBody: [UInt8] = []
        private var released = false
        private var held: [CheckedContinuation<Void, Never>] = []
        private var waitingForRequest: CheckedContinuation<Void, Never>?

        func hold(_ body: [UInt8]) async {
            requests += 1
            if requests == 1 { firstBody = body }
            waitingForRequest?.resume()
            waitingForRequest = nil
            guard !released else { return }
            await withCheckedContinuation { held.append($0) }
        }

        func waitForARequest() async {
            guard requests == 0 else { return }
            await withCheckedContinuation { waitingForRequest = $0 }
        }

        func release() {
            released = true
            for continuation in held { continuation.resume() }
            held.removeAll()
        }
    }

    // Awaits a condition with no deadline of its own: the limit turns a hang into a failure.
    @Test(.timeLimit(.minutes(10))) func aReceiverThatNeverAnswersCostsOneRequestAndACappedQueue() async throws {
        let receiver = SilentReceiver()
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            await receiver.hold(Array(buffer: try await request.body.collect(upTo: 1 << 22)))
            return Response(status: .noContent)
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) })
        let serving = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            _ = try await store.addWebhook(url: "http://127.0.0.1:\(port)/hook", secret: "a-webhook-secret-of-some-length", siteID: nil)
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            var limits = WebhookDispatcher.Limits()
            limits.queuedPerWebhook = 500
            limits.eventsPerDelivery = 100
            let drops = Mutex(0)
            let dispatcher = WebhookDispatcher(store: store, client: client, attempts: 1, limits: limits, logger: Logger(label: "test"),
                                               onDrop: { count in drops.withLock { $0 += count } })
            // 10,000 events in batches of 500, as a busy server publishes them, before the
            // dispatcher first runs: one sorting pass sees them all.
            for batch in 0..<20 {
                let events = try (0..<500).map { index in
                    try StoredEvent(id: batch * 500 + index + 1, gatewayID: "door", siteID: office.site.id, label: "event \(batch * 500 + index)",
                                    transition: index % 2 == 0 ? .enter : .exit, identity: office.mordor.identity, time: Double(batch * 500 + index))
                }
                dispatcher.enqueue(events)
            }
            let running = Task { await dispatcher.run() }
            await receiver.waitForARequest()
            // One request in flight and never answered; the queue kept its newest 500, of which
            // the worker took the oldest 100; everything older was dropped and counted.
            #expect(await receiver.requests == 1)
            struct Delivery: Decodable { var events: [StoredEvent] }
            let sent = try JSONDecoder().decode(Delivery.self, from: Data(await receiver.firstBody)).events
            #expect(sent.count == 100)
            #expect(sent.first?.id == 9_501, "the oldest events are the ones dropped")
            #expect(dispatcher.queuedEvents == 400)
            #expect(dispatcher.droppedEvents == 9_500)
            #expect(drops.withLock { $0 } == 9_500)
            running.cancel()
            await running.value
            await receiver.release()
            try await client.shutdown()
        }
        serving.cancel()
    }

    @Test func webhookURLsAndSecretsAreChecked() async throws {
        try await TestBackend.sqlite.withStore { store in
            await #expect(throws: RegistryError.self) { try await store.addWebhook(url: "ftp://x/y", secret: String(repeating: "s", count: 20), siteID: nil) }
            await #expect(throws: RegistryError.self) { try await store.addWebhook(url: "http://x/y", secret: "short", siteID: nil) }
            // Six characters of three bytes each: 18 bytes, but 6 as the document's minLength counts.
            await #expect(throws: RegistryError.self) { try await store.addWebhook(url: "http://x/y", secret: "€€€€€€", siteID: nil) }
            _ = try await store.addWebhook(url: "http://x/y", secret: String(repeating: "€", count: 16), siteID: nil)
            await #expect(throws: RegistryError.self) { try await store.addWebhook(url: "http://x/y", secret: String(repeating: "s", count: 20), siteID: 99) }
        }
    }
}
