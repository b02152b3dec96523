import BeaconGateway
import Foundation
import Hummingbird
import NIOFoundationCompat

extension ProximaServer {
    func addIngestRoutes(to router: Router<ProximaRequestContext>) {
        router.post("/v1/sightings") { request, context in
            let principal = try context.require(.ingest)
            guard let gatewayID = principal.gatewayID else {
                throw APIError(.forbidden, field: "Authorization", "this gateway token is not bound to a registered gateway")
            }
            if let wait = await self.limiter.take(gatewayID) {
                self.metrics.refusedBatches.increment()
                var error = APIError(.tooManyRequests, field: "rate", "more than \(Int(self.configuration.batchesPerSecond)) batches per second from this gateway; retry later")
                error.headers[.retryAfter] = String(max(1, Int(wait.rounded(.up))))
                throw error
            }
            let mediaType = request.headers[.contentType].map(Self.mediaType)
            let isEdge = mediaType == EdgeBatch.mediaType || mediaType == CompactEdgeBatch.mediaType
            let batch: SightingBatch?
            let edge: (batch: EdgeBatch, outcome: GatewayMonitor.StepOutcome)?
            do {
                if let mediaType, !isEdge, mediaType != CompactSightingBatch.mediaType, mediaType != "application/json" {
                    throw APIError(.unsupportedMediaType, field: "Content-Type",
                                   "expected application/json, \(CompactSightingBatch.mediaType), \(EdgeBatch.mediaType) or \(CompactEdgeBatch.mediaType), found '\(mediaType.prefix(80))'")
                }
                let buffer = try await request.body.collect(upTo: self.configuration.maxBatchBytes)
                if isEdge {
                    edge = try self.decodeEdgeBatch(buffer, compact: mediaType == CompactEdgeBatch.mediaType)
                    batch = nil
                } else {
                    batch = try self.decodeBatch(buffer, contentType: request.headers[.contentType])
                    edge = nil
                }
            } catch {
                // Every refused body counts (400 malformed, 413 too large), not only floods.
                self.metrics.refusedBatches.increment()
                throw error
            }
            let result = if let edge {
                try await self.acceptEdge(edge.outcome, sequence: edge.batch.sequence, sightings: edge.batch.sightings, gatewayID: gatewayID)
            } else {
                try await self.accept(batch!, gatewayID: gatewayID)
            }
            return try Self.json(IngestReply(accepted: result.accepted, duplicate: result.duplicate, events: result.events.count), status: .accepted)
        }
        router.post(RouterPath(Self.aprilBrotherPath)) { request, context in
            try await self.acceptAprilBrother(request, context: context)
        }
        router.get("/v1/ranging") { [store] request, context in
            try context.require(.read)
            return try Self.json(try await store.rangingState(gatewayID: Self.query(request, "gateway")))
        }
    }

    /// Runs a batch through the pipeline (Ingest/IngestPipeline.swift). The HTTP route and the
    /// demo's built-in gateway share it.
    public func accept(_ batch: SightingBatch, gatewayID: String) async throws -> IngestResult {
        try await ingestion.ingest(gatewayID: gatewayID, batch: batch)
    }

    /// An edge gateway's step results, through the same pipeline.
    public func acceptEdge(_ outcome: GatewayMonitor.StepOutcome, sequence: Int, sightings: Int, gatewayID: String) async throws -> IngestResult {
        try await ingestion.ingestEdge(gatewayID: gatewayID, outcome: outcome, sequence: sequence, sightings: sightings)
    }

    /// An edge batch, checked: the gateway's engine must have run with this server's settings,
    /// or its events would differ from what this server would have decided.
    func decodeEdgeBatch(_ buffer: ByteBuffer, compact: Bool) throws -> (batch: EdgeBatch, outcome: GatewayMonitor.StepOutcome) {
        guard buffer.readableBytes > 0 else {
            throw APIError(.badRequest, field: "body", "expected an edge batch {\"sequence\":…,\"settings\":…,\"changes\":[…],\"readings\":[…]}, found an empty body")
        }
        let expected = EdgeBatch.Settings(settings)
        let batch: EdgeBatch
        if compact {
            let digest: UInt64
            do throws(EdgeBatch.Refusal) { (batch, digest) = try CompactEdgeBatch.decode(buffer) } catch {
                throw APIError(.badRequest, field: error.field, error.reason)
            }
            guard digest == expected.digest else {
                throw APIError(.conflict, field: "settings",
                               "the gateway's engine settings (digest \(String(digest, radix: 16))) are not this server's (exit rule '\(expected.exitRule)', \(expected.beaconLimit) beacons, digest \(String(expected.digest, radix: 16))); give the gateway --exit-rule to match")
            }
        } else {
            do {
                batch = try JSONDecoder().decode(EdgeBatch.self, from: buffer)
            } catch let error as DecodingError {
                // Out-of-range integers come back without a coding path, as in the sightings form.
                if let root = try? JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any] {
                    if let issue = SightingBatch.check(root["sequence"], 0...SightingBatch.maximumSequence, field: "sequence") { throw issue }
                    if let issue = SightingBatch.check(root["sightings"], 0...EdgeBatch.maximumSightings, field: "sightings") { throw issue }
                }
                throw error
            }
        }
        guard compact || batch.settings.names(settings.exitRule) else {
            throw APIError(.conflict, field: "settings.exitRule",
                           "this server runs gateways with exit rule '\(expected.exitRule)', the gateway with '\(batch.settings.exitRule.prefix(80))'; give the gateway --exit-rule to match")
        }
        guard compact || batch.settings.beaconLimit == expected.beaconLimit else {
            throw APIError(.conflict, field: "settings.beaconLimit",
                           "this server keeps \(expected.beaconLimit) beacons per gateway, the gateway \(batch.settings.beaconLimit)")
        }
        let now = clock()
        let window = configuration.sightingTimeWindow
        do {
            let outcome = try batch.outcome(maximumEntries: configuration.maxSightingsPerBatch, times: max(0, now - window.past)...(now + window.future))
            return (batch, outcome)
        } catch {
            throw APIError(.unprocessableContent, field: error.field, error.reason)
        }
    }

    /// Where April Brother gateways post; their firmware sets a URL but no header, so the
    /// token may come as `?token=` here (AuthenticationMiddleware).
    static let aprilBrotherPath = "/v1/gateways/april-brother"

    struct AprilBrotherReply: Codable {
        var accepted: Int
        /// Advertisements that carried no beacon (or a malformed one) and were passed over.
        var ignored: Int
        var events: Int
    }

    func acceptAprilBrother(_ request: Request, context: ProximaRequestContext) async throws -> Response {
        let principal = try context.require(.ingest)
        guard let gatewayID = principal.gatewayID else {
            throw APIError(.forbidden, field: "Authorization", "this gateway token is not bound to a registered gateway")
        }
        if let wait = await limiter.take(gatewayID) {
            metrics.refusedBatches.increment()
            var error = APIError(.tooManyRequests, field: "rate", "more than \(Int(configuration.batchesPerSecond)) batches per second from this gateway; retry later")
            error.headers[.retryAfter] = String(max(1, Int(wait.rounded(.up))))
            throw error
        }
        let upload: AprilBrotherUpload
        do {
            let buffer = try await request.body.collect(upTo: configuration.maxBatchBytes)
            let bytes = Array(buffer: buffer)
            guard !bytes.isEmpty else {
                throw APIError(.badRequest, field: "body", "expected an April Brother upload, found an empty body")
            }
            switch request.headers[.contentType].map(Self.mediaType) {
            case "application/msgpack", "application/x-msgpack":
                upload = try AprilBrotherUpload.decode(messagePack: bytes, maxDevices: configuration.maxSightingsPerBatch)
            case "application/json":
                upload = try AprilBrotherUpload.decode(json: bytes, maxDevices: configuration.maxSightingsPerBatch)
            case let other:
                throw APIError(.unsupportedMediaType, field: "Content-Type",
                               "expected application/msgpack or application/json, found \(other.map { "'\($0)'" } ?? "none")")
            }
        } catch {
            metrics.refusedBatches.increment()
            throw error
        }
        let (sightings, ignored) = upload.sightings(receiver: gatewayID, time: clock())
        // No sequence: the message id restarts with the gateway, and the firmware does not
        // resend a post the server answered.
        let result = try await accept(SightingBatch(sequence: nil, sightings: sightings), gatewayID: gatewayID)
        return try Self.json(AprilBrotherReply(accepted: result.accepted, ignored: ignored, events: result.events.count), status: .accepted)
    }

    struct IngestReply: Codable {
        var accepted: Int
        var duplicate: Bool
        var events: Int
    }

    /// The JSON form, or the compact binary form (`CompactSightingBatch.mediaType`) read
    /// without Foundation's JSON machinery. Both refuse with the same field names and limits.
    func decodeBatch(_ buffer: ByteBuffer, contentType: String? = nil) throws -> SightingBatch {
        if let contentType, Self.mediaType(contentType) == CompactSightingBatch.mediaType {
            return try decodeCompactBatch(buffer)
        }
        guard buffer.readableBytes > 0 else {
            throw APIError(.badRequest, field: "body", "expected a JSON batch {\"sightings\":[...]}, found an empty body")
        }
        let batch: SightingBatch
        do {
            batch = try JSONDecoder().decode(SightingBatch.self, from: buffer)
        } catch let error as DecodingError {
            // Out-of-range numbers come back without a coding path; find the field ourselves.
            if let diagnosis = SightingBatch.diagnose(Data(buffer: buffer)) { throw diagnosis }
            throw error
        }
        guard batch.sightings.count <= configuration.maxSightingsPerBatch else {
            throw APIError(.contentTooLarge, field: "sightings",
                           "expected at most \(configuration.maxSightingsPerBatch) sightings per batch, found \(batch.sightings.count)")
        }
        return batch
    }

    func decodeCompactBatch(_ buffer: ByteBuffer) throws -> SightingBatch {
        let now = clock()
        let window = configuration.sightingTimeWindow
        let limits = CompactSightingBatch.Limits(maxSightings: configuration.maxSightingsPerBatch,
                                                 times: max(0, now - window.past)...(now + window.future))
        do {
            return try CompactSightingBatch.decode(buffer, limits: limits)
        } catch {
            throw APIError(error.isTooLarge ? .contentTooLarge : .badRequest, field: error.field, error.description)
        }
    }

    /// `application/x; charset=…` → `application/x`, lower-cased.
    static func mediaType(_ contentType: String) -> String {
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }
}
