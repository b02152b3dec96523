import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
import ServiceLifecycle

/// Tells Wallet on a device that its passes changed, through Apple's Push Notification service:
/// Apple's documented HTTP/2 request `POST /3/device/<pushToken>` with `apns-topic` = the pass
/// type identifier and the empty JSON payload `{}`, over TLS with the pass type certificate as
/// the client certificate ("Sending notification requests to APNs"; Wallet's "Adding a Web
/// Service to Update Passes"). Wallet then asks the web service which serials changed.
///
/// This workplace cannot reach APNs: the client is tested against a local HTTP/2 endpoint.
public final class APNsPassPusher: Sendable {
    public static let production = "https://api.push.apple.com"
    public static let development = "https://api.sandbox.push.apple.com"

    public enum Outcome: Sendable, Hashable {
        /// APNs took the notification (200).
        case delivered
        /// The token is no longer valid for the topic (410): the device's registrations should go.
        case unregistered
        /// APNs refused it for a reason retrying will not change (400, 403, 404, 413).
        case rejected(status: Int, reason: String)
        /// Not delivered after the bounded retries (connection failures, 429, 5xx).
        case failed(String)
    }

    public struct Result: Sendable {
        public var outcome: Outcome
        /// The HTTP version of the last answer (APNs speaks only HTTP/2).
        public var httpVersion: HTTPVersion?
        public var attempts: Int
    }

    let client: HTTPClient
    let baseURL: String
    let maxAttempts: Int
    let firstRetryDelay: Duration

    /// - Parameters:
    ///   - trustRoots: the CAs that may sign the endpoint's certificate; nil trusts the system's (for Apple's).
    public init(certificatePEM: String, privateKeyPEM: String, baseURL: String = production,
                trustRoots: [NIOSSLCertificate]? = nil, maxAttempts: Int = 3, firstRetryDelay: Duration = .milliseconds(500)) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { .certificate($0) }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem))
        if let trustRoots { tls.trustRoots = .certificates(trustRoots) }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // HTTP/2 is chosen by ALPN with a TLS endpoint; APNs answers nothing else.
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.maxAttempts = max(1, maxAttempts)
        self.firstRetryDelay = firstRetryDelay
    }

    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Sends one pass-update notification, retrying a bounded number of times (with doubling
    /// delays) when APNs is busy (429), failing (5xx) or unreachable.
    public func push(token: String, topic: String) async -> Result {
        var request = HTTPClientRequest(url: "\(baseURL)/3/device/\(token)")
        request.method = .POST
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "{}"))
        var delay = firstRetryDelay
        var last = Result(outcome: .failed("not sent"), httpVersion: nil, attempts: 0)
        for attempt in 1...maxAttempts {
            last.attempts = attempt
            do {
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 16 * 1024)
                last.httpVersion = response.version
                let reason = Self.reason(body) ?? "status \(response.status.code)"
                switch response.status.code {
                case 200:
                    last.outcome = .delivered
                    return last
                case 410:
                    last.outcome = .unregistered
                    return last
                case 429, 500...599:
                    last.outcome = .failed("APNs answered \(response.status.code) (\(reason))")
                default:
                    last.outcome = .rejected(status: Int(response.status.code), reason: reason)
                    return last
                }
            } catch {
                last.outcome = .failed("\(error)")
            }
            if attempt < maxAttempts {
                try? await Task.sleep(for: delay)
                delay *= 2
            }
        }
        return last
    }

    /// APNs explains a refusal as `{"reason": "BadDeviceToken"}`.
    static func reason(_ body: ByteBuffer) -> String? {
        struct Refusal: Decodable { var reason: String }
        return try? JSONDecoder().decode(Refusal.self, from: Data(buffer: body)).reason
    }
}

/// Sends the queued pass-update pushes: delivered and unregistered ones leave the queue (an
/// unregistered token also loses its registrations), others count an attempt and are dropped
/// after `maxAttempts` passes of the queue, so a dead token cannot stay forever.
public struct PassPushDelivery: Sendable {
    public let store: Store
    public let pusher: APNsPassPusher
    public var maxAttempts = 5

    public init(store: Store, pusher: APNsPassPusher) {
        self.store = store
        self.pusher = pusher
    }

    /// Sends up to `limit` queued pushes; returns how many were delivered.
    @discardableResult
    public func deliverQueued(limit: Int = 100, logger: Logger = Logger(label: "proxima.apns")) async throws -> Int {
        var delivered = 0
        for push in try await store.queuedPushes(limit: limit) {
            let result = await pusher.push(token: push.pushToken, topic: push.passTypeIdentifier)
            switch result.outcome {
            case .delivered:
                delivered += 1
                try await store.finishPush(id: push.id, remove: true)
            case .unregistered:
                try await store.forgetPushToken(push.pushToken)
            case .rejected(let status, let reason):
                logger.warning("APNs refused a pass push", metadata: ["status": "\(status)", "reason": "\(reason)"])
                try await store.finishPush(id: push.id, remove: true)
            case .failed(let reason):
                logger.warning("APNs push not delivered", metadata: ["reason": "\(reason)", "attempts": "\(push.attempts + 1)"])
                try await store.finishPush(id: push.id, remove: push.attempts + 1 >= maxAttempts)
            }
        }
        return delivered
    }
}

/// Drains the push queue every few seconds while the server runs; stops its client on shutdown.
final class PassPushService: Service, Sendable {
    let delivery: PassPushDelivery
    let interval: Duration
    let logger: Logger

    init(delivery: PassPushDelivery, interval: Duration = .seconds(5), logger: Logger) {
        self.delivery = delivery
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await self.delivery.deliverQueued(logger: self.logger)
                } catch {
                    self.logger.warning("pass pushes not sent", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: self.interval)
            }
        }
        try? await delivery.pusher.shutdown()
    }
}
