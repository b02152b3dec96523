import BeaconGateway
import BeaconKit
import Foundation
import NIOCore

/// `proxima gateway --edge`: each batch goes through the server's own per-gateway engine
/// (``GatewayMonitor``) here, and only what it decided travels (``EdgeBatch``): enters and exits
/// with the next batch, readings alone every `--edge-interval` (``EdgeSummaryHold``). The
/// engine's checkpoint is kept in a file after every batch the server took, so a restarted
/// gateway continues where it was, as the server's checkpoint would.
actor EdgeUploadEncoding: UploadEncoding {
    let settings: GatewaySettings
    let checkpointPath: String
    private var monitor: GatewayMonitor
    private var hold: EdgeSummaryHold
    private(set) var uploadedBytes = 0
    private(set) var sightings = 0
    private(set) var posts = 0

    struct CheckpointUnreadable: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "the edge checkpoint \(path) cannot be used (\(reason)); remove it to start the engine afresh" }
    }

    init(settings: GatewaySettings, checkpointPath: String, readingInterval: Double) throws {
        self.settings = settings
        self.checkpointPath = checkpointPath
        hold = EdgeSummaryHold(settings: settings, readingInterval: readingInterval)
        if let data = FileManager.default.contents(atPath: checkpointPath) {
            do {
                let checkpoint = try JSONDecoder().decode(EngineCheckpoint.self, from: data)
                monitor = try GatewayMonitor(settings: settings, header: GatewayCheckpointHeader(engine: checkpoint, recentSequences: RecentSequences()),
                                             beacons: [])
            } catch {
                throw CheckpointUnreadable(path: checkpointPath, reason: "\(error)")
            }
        } else {
            monitor = GatewayMonitor(settings: settings)
        }
    }

    func encode(_ batch: SightingBatch) async throws -> (ByteBuffer, String)? {
        let now = Date().timeIntervalSince1970
        // An empty batch is the uploader's call to send what is held (isDue said so).
        if !batch.sightings.isEmpty {
            hold.add(monitor.step(batch, now: now), sightings: batch.sightings.count, now: now)
            guard hold.isDue(at: now) else { return nil }
        }
        guard hold.isHolding else { return nil }
        let edge = hold.take(sequence: batch.sequence ?? 0)
        let (body, contentType) = if let compact = CompactEdgeBatch.encode(edge) {
            (compact, CompactEdgeBatch.mediaType)
        } else {
            (ByteBuffer(bytes: try JSONEncoder().encode(edge)), EdgeBatch.mediaType)
        }
        uploadedBytes += body.readableBytes
        sightings += edge.sightings
        posts += 1
        return (body, contentType)
    }

    func isDue(stopping: Bool) async -> Bool {
        stopping ? hold.isHolding : hold.isDue(at: Date().timeIntervalSince1970)
    }

    func accepted(_ batch: SightingBatch) async throws {
        let data = try JSONEncoder().encode(monitor.engine.checkpoint)
        try data.write(to: URL(fileURLWithPath: checkpointPath), options: .atomic)
    }
}
