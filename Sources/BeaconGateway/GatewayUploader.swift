import AsyncHTTPClient
import BeaconKit
import DequeModule
import Foundation
import Logging
import NIOSSL
import NIOCore

/// A gateway's upload side: buffers sightings from any source in a bounded queue (dropping the
/// oldest when the server is unreachable for long), and posts them as numbered batches to
/// `POST /v1/sightings`, retrying a failed batch with growing pauses. The sequence number lets
/// the server ignore a batch it already took when only the answer was lost.
public actor GatewayUploader {
    public struct Configuration: Sendable {
        public var server: URL
        public var token: String
        public var batchSize = 500
        public var bufferLimit = 100_000
        public var flushInterval: Duration = .milliseconds(500)
        public var firstRetryPause: Duration = .milliseconds(200)
        public var maxRetryPause: Duration = .seconds(10)
        /// The body's form: compact binary by default, JSON for servers older than it.
        public var uploadFormat = UploadFormat.binary
        /// Encodes each batch instead of `uploadFormat` (edge mode posts its engine's results).
        public var encoding: (any UploadEncoding)?

        public init(server: URL, token: String) {
            self.server = server
            self.token = token
        }
    }

    /// How batches travel: `CompactSightingBatch` or `SightingBatch`'s JSON.
    public enum UploadFormat: String, Sendable, Hashable, CaseIterable {
        case binary, json
    }

    public struct Statistics: Sendable, Hashable {
        public var posted = 0
        public var dropped = 0
        public var batches = 0
        public var retries = 0
    }

    /// A refusal the gateway cannot fix by retrying (bad token, malformed batch).
    /// The server's TLS certificate did not verify (no `--ca-file` that signed it, a wrong
    /// host name, an expired certificate).
    public struct UntrustedServer: Error, CustomStringConvertible {
        public var detail: String
        public var description: String {
            "TLS certificate verification of the server failed (\(detail)); give the CA that signed it with --ca-file"
        }
    }

    static func isCertificateFailure(_ error: any Error) -> Bool {
        error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError
    }

    public struct Refused: Error, CustomStringConvertible {
        public var status: Int
        public var body: String
        public var description: String { "the server refused the batch with \(status): \(body)" }
    }

    let configuration: Configuration
    let client: HTTPClient
    let logger: Logger
    private var buffer = Deque<Sighting>()
    private var sequence: Int
    public private(set) var statistics = Statistics()

    public init(configuration: Configuration, client: HTTPClient = .shared, logger: Logger = Logger(label: "proxima.gateway"),
                firstSequence: Int = Int(Date().timeIntervalSince1970 * 1000)) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
        // Millisecond start times keep sequences rising across gateway restarts.
        self.sequence = firstSequence
    }

    /// Queues a sighting; when full, the oldest goes, since fresh presence matters most.
    public func enqueue(_ sighting: Sighting) {
        if buffer.count >= configuration.bufferLimit {
            buffer.removeFirst()
            statistics.dropped += 1
        }
        buffer.append(sighting)
    }

    public var pending: Int { buffer.count }

    private var finished = false
    private var flushing = false

    /// Reads the source until it ends, posting full batches as they fill and the rest on a
    /// timer; returns once everything read was posted.
    public func run(source: AsyncThrowingStream<Sighting, any Error>) async throws {
        finished = false
        let interval = configuration.flushInterval
        let flusher = Task {
            let clock = ContinuousClock()
            while !self.finished {
                // Slept in short steps, so the end of the source (a stopped gateway) is not
                // kept waiting for a long interval. The flusher is never cancelled: a batch it
                // is posting has left the buffer and must reach the server.
                let due = clock.now + interval
                while clock.now < due, !self.finished {
                    try await clock.sleep(until: min(due, clock.now + .milliseconds(100)))
                }
                if self.finished { break }
                try await self.flush(onlyFull: false)
            }
        }
        // Cancelling the run (a stopping gateway whose server does not answer) gives up the
        // flusher's batch too.
        try await withTaskCancellationHandler {
            do {
                for try await sighting in source {
                    enqueue(sighting)
                    if buffer.count >= configuration.batchSize {
                        try await flush(onlyFull: true)
                    }
                }
            } catch {
                finished = true
                _ = try? await flusher.value
                throw error
            }
            finished = true
            try await flusher.value
            try await flush(onlyFull: false)
        } onCancel: {
            flusher.cancel()
        }
    }

    /// Posts queued sightings batch by batch; with `onlyFull`, leaves a partial batch queued.
    /// A batch leaves the queue before it is posted, so sightings queued meanwhile (and any the
    /// bound drops) never shift it; it is retried until the server takes it.
    public func flush(onlyFull: Bool) async throws {
        guard !flushing else { return }
        flushing = true
        defer { flushing = false }
        while !buffer.isEmpty, !onlyFull || buffer.count >= configuration.batchSize {
            let count = min(configuration.batchSize, buffer.count)
            let batch = SightingBatch(sequence: sequence, sightings: Array(buffer.prefix(count)))
            buffer.removeFirst(count)
            sequence += 1
            try await post(batch)
            statistics.posted += count
            statistics.batches += 1
        }
        // Results an encoding held back (edge readings) go up on their own once due, or when
        // the source has ended, in an empty batch of their own.
        if !onlyFull, buffer.isEmpty, let encoding = configuration.encoding, await encoding.isDue(stopping: finished) {
            let batch = SightingBatch(sequence: sequence, sightings: [])
            sequence += 1
            try await post(batch)
            statistics.batches += 1
        }
    }

    func post(_ batch: SightingBatch) async throws {
        let encoded = if let encoding = configuration.encoding {
            try await encoding.encode(batch)
        } else {
            try Self.body(batch, format: configuration.uploadFormat)
        }
        // Nothing to send yet: the encoding holds this batch's results for a later post.
        guard let (body, contentType) = encoded else { return }
        var pause = configuration.firstRetryPause
        var taken = false
        while true {
            var request = HTTPClientRequest(url: configuration.server.appendingPathComponent("v1/sightings").absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: contentType)
            request.headers.add(name: "Authorization", value: "Bearer \(configuration.token)")
            request.body = .bytes(body)
            do {
                let response = try await client.execute(request, timeout: .seconds(30))
                let text = String(buffer: try await response.body.collect(upTo: 64 * 1024))
                switch response.status.code {
                case 200..<300:
                    taken = true
                case 429, 500...:
                    logger.warning("server busy, retrying", metadata: ["status": "\(response.status.code)"])
                case 401, 403, 400, 409, 413, 422:
                    throw Refused(status: Int(response.status.code), body: text)
                default:
                    logger.warning("unexpected answer, retrying", metadata: ["status": "\(response.status.code)", "body": "\(text.prefix(200))"])
                }
            } catch let refused as Refused {
                throw refused
            } catch let failure where Self.isCertificateFailure(failure) {
                // Retrying cannot make an untrusted server trusted; say so and stop.
                throw UntrustedServer(detail: "\(failure)")
            } catch {
                if Task.isCancelled { throw error }
                logger.warning("server \(configuration.server.absoluteString) unreachable, retrying", metadata: ["error": "\(error)"])
            }
            if taken {
                // Outside the retry: a failure here must not post the batch a second time.
                try await configuration.encoding?.accepted(batch)
                return
            }
            statistics.retries += 1
            try await Task.sleep(for: pause)
            pause = min(pause * 2, configuration.maxRetryPause)
        }
    }

    /// A batch the compact form cannot carry (a receiver name over 255 bytes) goes as JSON.
    static func body(_ batch: SightingBatch, format: UploadFormat) throws -> (ByteBuffer, String) {
        if format == .binary, let compact = try? CompactSightingBatch.encode(batch) {
            return (compact, CompactSightingBatch.mediaType)
        }
        return (ByteBuffer(bytes: try JSONEncoder().encode(batch)), "application/json")
    }
}

/// A batch's body other than its sightings (`proxima gateway --edge`): `encode` is called once
/// per batch, before its first attempt (retries resend the same body), and may answer nil to
/// hold the batch's results for a later post; `accepted` once the server took a body.
public protocol UploadEncoding: Sendable {
    func encode(_ batch: SightingBatch) async throws -> (ByteBuffer, String)?
    func accepted(_ batch: SightingBatch) async throws
    /// Whether held results should go up now, in an empty batch (`stopping`: the source ended,
    /// so everything held must go).
    func isDue(stopping: Bool) async -> Bool
}
