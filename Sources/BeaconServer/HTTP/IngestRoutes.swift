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
            let batch: SightingBatch
            do {
                let buffer = try await request.body.collect(upTo: self.configuration.maxBatchBytes)
                batch = try self.decodeBatch(buffer)
            } catch {
                // Every refused body counts (400 malformed, 413 too large), not only floods.
                self.metrics.refusedBatches.increment()
                throw error
            }
            let result = try await self.accept(batch, gatewayID: gatewayID)
            return try Self.json(IngestReply(accepted: result.accepted, duplicate: result.duplicate, events: result.events.count), status: .accepted)
        }
        router.get("/v1/ranging") { [store] request, context in
            try context.require(.read)
            return try Self.json(try await store.rangingState(gatewayID: Self.query(request, "gateway")))
        }
    }

    /// Runs a batch through the gateway's monitor, then counts it, wakes event readers and
    /// hands new events to the webhooks. The HTTP route and the demo's built-in gateway share it.
    public func accept(_ batch: SightingBatch, gatewayID: String) async throws -> IngestResult {
        let result = try await ingestion.ingest(gatewayID: gatewayID, batch: batch)
        if result.duplicate {
            metrics.duplicateBatches.increment()
        } else {
            metrics.batches.increment()
            metrics.sightings.increment(by: Int64(result.accepted))
            metrics.forgottenBeacons.increment(by: Int64(result.forgottenBeacons))
            metrics.untrackedSightings.increment(by: Int64(result.untrackedSightings))
        }
        if !result.events.isEmpty {
            metrics.events.increment(by: Int64(result.events.count))
            await signal.notify()
            let events = result.events
            let webhooks = self.webhooks
            Task { await webhooks.deliver(events) }
            for event in events {
                logger.info("region event", metadata: [
                    "kind": "\(event.kindName)", "label": "\(event.label)", "gateway": "\(event.gatewayID)", "time": "\(event.time)",
                ])
            }
        }
        return result
    }

    struct IngestReply: Codable {
        var accepted: Int
        var duplicate: Bool
        var events: Int
    }

    func decodeBatch(_ buffer: ByteBuffer) throws -> SightingBatch {
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
}
