@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import ServiceLifecycle
import Synchronization
import Testing

/// Issue 17, item 4: the APNs client sends Apple's documented pass-update request. APNs itself
/// cannot be reached here, so a local HTTP/2 endpoint over TLS (test-made certificates, the
/// pass type certificate required as the client certificate) stands in for it.
@Suite("APNs pass pushes")
struct APNsPassPusherTests {
    struct Received: Sendable, Hashable {
        var method: String
        var path: String
        var topic: String?
        var contentType: String?
        var body: String
    }

    /// The stand-in: records every request; answers by token: `gone` 410 Unregistered, `bad`
    /// 400 BadDeviceToken, `busy` always 503, `flaky` 503 once then 200, anything else 200.
    final class Endpoint: Sendable {
        let received = Mutex<[Received]>([])

        func answer(token: String) -> (HTTPResponse.Status, String) {
            let seen = received.withLock { list in list.filter { $0.path.hasSuffix("/\(token)") }.count }
            switch token {
            case "gone": return (.gone, #"{"reason":"Unregistered","timestamp":1700000000000}"#)
            case "bad": return (.badRequest, #"{"reason":"BadDeviceToken"}"#)
            case "busy": return (.serviceUnavailable, #"{"reason":"ServiceUnavailable"}"#)
            case "flaky" where seen <= 1: return (.serviceUnavailable, #"{"reason":"ServiceUnavailable"}"#)
            default: return (.ok, "")
            }
        }

        /// Runs the endpoint for the duration of `body`, passing it the endpoint's base URL.
        func run<T: Sendable>(certificates: PassTestCertificates, _ body: @Sendable (String) async throws -> T) async throws -> T {
            let router = Router()
            router.post("/3/device/:token") { request, context -> Response in
                let token = context.parameters.get("token") ?? ""
                let bytes = try await request.body.collect(upTo: 4096)
                self.received.withLock {
                    $0.append(Received(method: request.method.rawValue, path: request.uri.path, topic: request.headers.first { $0.name.rawName == "apns-topic" }?.value,
                                       contentType: request.headers[.contentType], body: String(buffer: bytes)))
                }
                let (status, text) = self.answer(token: token)
                return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
            }
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificates.serverPEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificates.serverKeyPEM.utf8), format: .pem)))
            // APNs authenticates the sender by its certificate: so does the stand-in.
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates([try certificates.nioCertificate(certificates.wwdr)])
            let port = AsyncStream<Int>.makeStream()
            let app = Application(router: router, server: try .http2Upgrade(tlsConfiguration: tls),
                                  configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                                  onServerRunning: { channel in
                                      port.continuation.yield(channel.localAddress?.port ?? 0)
                                      port.continuation.finish()
                                  },
                                  logger: Logger(label: "apns-stand-in"))
            let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "apns-stand-in")))
            let running = Task { try await group.run() }
            defer { running.cancel() }
            var iterator = port.stream.makeAsyncIterator()
            let bound = try #require(await iterator.next())
            do {
                let result = try await body("https://localhost:\(bound)")
                await group.triggerGracefulShutdown()
                _ = try? await running.value
                return result
            } catch {
                await group.triggerGracefulShutdown()
                _ = try? await running.value
                throw error
            }
        }
    }

    static func pusher(_ certificates: PassTestCertificates, url: String, clientPEM: String? = nil, clientKeyPEM: String? = nil,
                       maxAttempts: Int = 3) throws -> APNsPassPusher {
        try APNsPassPusher(certificatePEM: clientPEM ?? certificates.passPEM, privateKeyPEM: clientKeyPEM ?? certificates.passKeyPEM,
                           baseURL: url, trustRoots: [try certificates.nioCertificate(certificates.serverCA)],
                           maxAttempts: maxAttempts, firstRetryDelay: .milliseconds(20))
    }

    @Test func sendsApplesDocumentedRequestOverHTTP2() async throws {
        let certificates = try PassTestCertificates.make()
        let endpoint = Endpoint()
        let result = try await endpoint.run(certificates: certificates) { url in
            let pusher = try Self.pusher(certificates, url: url)
            let result = await pusher.push(token: "0f1e2d3c4b5a6978", topic: PassTestCertificates.passTypeIdentifier)
            try await pusher.shutdown()
            return result
        }
        #expect(result.outcome == .delivered)
        #expect(result.httpVersion == .http2)
        #expect(result.attempts == 1)
        #expect(endpoint.received.withLock { $0 } == [
            Received(method: "POST", path: "/3/device/0f1e2d3c4b5a6978", topic: PassTestCertificates.passTypeIdentifier,
                     contentType: "application/json", body: "{}"),
        ])
    }

    @Test func outcomesAndBoundedRetries() async throws {
        let certificates = try PassTestCertificates.make()
        let endpoint = Endpoint()
        let results = try await endpoint.run(certificates: certificates) { url in
            let pusher = try Self.pusher(certificates, url: url)
            var results: [String: APNsPassPusher.Result] = [:]
            for token in ["gone", "bad", "busy", "flaky"] {
                results[token] = await pusher.push(token: token, topic: PassTestCertificates.passTypeIdentifier)
            }
            try await pusher.shutdown()
            return results
        }
        #expect(results["gone"]?.outcome == .unregistered)
        #expect(results["bad"]?.outcome == .rejected(status: 400, reason: "BadDeviceToken"))
        #expect(results["bad"]?.attempts == 1, "a refusal is not retried")
        #expect(results["busy"]?.attempts == 3, "retries stop at the bound")
        if case .failed(let reason)? = results["busy"]?.outcome { #expect(reason.contains("503")) } else { Issue.record("busy: \(String(describing: results["busy"]?.outcome))") }
        #expect(results["flaky"]?.outcome == .delivered)
        #expect(results["flaky"]?.attempts == 2)
        let paths = endpoint.received.withLock { $0.map(\.path) }
        #expect(paths.filter { $0 == "/3/device/busy" }.count == 3)
    }

    @Test func aClientWithoutThePassCertificateIsRefusedByTheEndpoint() async throws {
        let certificates = try PassTestCertificates.make()
        let endpoint = Endpoint()
        let result = try await endpoint.run(certificates: certificates) { url in
            // The server's own certificate: valid, but not issued by the WWDR stand-in.
            let pusher = try Self.pusher(certificates, url: url, clientPEM: certificates.serverPEM, clientKeyPEM: certificates.serverKeyPEM, maxAttempts: 1)
            let result = await pusher.push(token: "0f1e2d3c", topic: PassTestCertificates.passTypeIdentifier)
            try await pusher.shutdown()
            return result
        }
        if case .failed = result.outcome {} else { Issue.record("expected a TLS failure, got \(result.outcome)") }
        #expect(endpoint.received.withLock { $0 }.isEmpty)
    }

    /// The queue after a re-version: a delivered push leaves it; a 410 takes the device's
    /// registrations with it, as Apple asks.
    @Test func queuedPushesAreDeliveredAndUnregisteredTokensForgotten() async throws {
        let certificates = try PassTestCertificates.make()
        let endpoint = Endpoint()
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let site = office.site
            let stored = StoredPass(pass: IssuedPass(serial: "s1", siteID: site.id, passTypeIdentifier: PassTestCertificates.passTypeIdentifier,
                                                     visitor: "Ada", version: 1, updateTag: 0, createdAt: 10, updatedAt: 10,
                                                     beacons: [CarriedBeacon(uuid: site.uuid, major: site.major, minor: office.mordor.minor, relevantText: "Mordor")]),
                                    authenticationToken: String(repeating: "k", count: 24))
            _ = try await store.insertPass(stored)
            for (device, token) in [("phone", "alive01"), ("tablet", "gone")] {
                _ = try await store.registerDevice(PassRegistration(deviceLibraryIdentifier: device, passTypeIdentifier: PassTestCertificates.passTypeIdentifier,
                                                                    serial: "s1", pushToken: token), now: 10)
            }
            let zone = try #require(try await store.zones(siteID: site.id).first { $0.minor == office.mordor.minor })
            _ = try await store.renumberZone(id: zone.id, minor: 1050, now: 20)
            #expect(Set(try await store.queuedPushes().map(\.pushToken)) == ["alive01", "gone"])
            let delivered = try await endpoint.run(certificates: certificates) { url in
                let delivery = PassPushDelivery(store: store, pusher: try Self.pusher(certificates, url: url))
                let count = try await delivery.deliverQueued()
                try await delivery.pusher.shutdown()
                return count
            }
            #expect(delivered == 1)
            #expect(try await store.queuedPushes().isEmpty)
            #expect(try await store.registrations(serial: "s1").map(\.deviceLibraryIdentifier) == ["phone"])
        }
        #expect(Set(endpoint.received.withLock { $0.map(\.path) }) == ["/3/device/alive01", "/3/device/gone"])
    }
}
