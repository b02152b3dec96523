import BeaconGateway
import BeaconKit
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// A stand-in for the server's `POST /v1/sightings`: answers with scripted statuses (the last
/// one repeats) and records every batch it is sent.
final class ScriptedIngestServer: Sendable {
    private let statuses: [HTTPResponseStatus]
    private let received = NIOLockedValueBox<[SightingBatch]>([])
    private let answered = NIOLockedValueBox(0)
    let channel: any Channel

    init(statuses: [HTTPResponseStatus]) async throws {
        self.statuses = statuses
        let box = NIOLockedValueBox<ScriptedIngestServer?>(nil)
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(Handler(server: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        box.withLockedValue { $0 = self }
    }

    var url: URL { URL(string: "http://127.0.0.1:\(channel.localAddress!.port!)")! }
    var batches: [SightingBatch] { received.withLockedValue { $0 } }
    /// Per received batch, whether it came in the compact form.
    var compact: [Bool] { compactBodies.withLockedValue { $0 } }
    private let compactBodies = NIOLockedValueBox<[Bool]>([])

    func answer(_ body: ByteBuffer) -> HTTPResponseStatus {
        let index = answered.withLockedValue { count in
            defer { count += 1 }
            return count
        }
        let status = statuses[min(index, statuses.count - 1)]
        // Either form the uploader may send: the compact one starts with its magic, "PXSB".
        let compact = try? CompactSightingBatch.decode(body, limits: .init(maxSightings: 5000))
        if status.code < 300, let batch = compact ?? (try? JSONDecoder().decode(SightingBatch.self, from: Data(body.readableBytesView))) {
            received.withLockedValue { $0.append(batch) }
            compactBodies.withLockedValue { $0.append(compact != nil) }
        }
        return status
    }

    final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let server: NIOLockedValueBox<ScriptedIngestServer?>
        let body = NIOLockedValueBox(ByteBuffer())

        init(server: NIOLockedValueBox<ScriptedIngestServer?>) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head:
                body.withLockedValue { $0.clear() }
            case .body(var part):
                _ = body.withLockedValue { $0.writeBuffer(&part) }
            case .end:
                let status = server.withLockedValue { $0 }?.answer(body.withLockedValue { $0 }) ?? .internalServerError
                let head = HTTPResponseHead(version: .http1_1, status: status, headers: ["Content-Length": "0"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}

@Suite("Gateway uploader")
struct GatewayUploaderTests {
    static func sighting(_ time: Double) -> Sighting {
        let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 1001)
        return Sighting(time: time, receiver: "door", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: -60,
                        frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))))
    }

    static func configuration(_ server: URL) -> GatewayUploader.Configuration {
        var configuration = GatewayUploader.Configuration(server: server, token: "px_test")
        configuration.batchSize = 4
        configuration.bufferLimit = 10
        configuration.firstRetryPause = .milliseconds(1)
        configuration.maxRetryPause = .milliseconds(2)
        return configuration
    }

    @Test func theBufferKeepsTheNewestWhenFull() async throws {
        let uploader = GatewayUploader(configuration: Self.configuration(URL(string: "http://127.0.0.1:9")!), firstSequence: 0)
        for time in 0..<25 { await uploader.enqueue(Self.sighting(Double(time))) }
        #expect(await uploader.pending == 10)
        #expect(await uploader.statistics.dropped == 15)
    }

    @Test func busyAnswersAreRetriedAndEveryBatchArrivesOnceInOrder() async throws {
        let server = try await ScriptedIngestServer(statuses: [.serviceUnavailable, .tooManyRequests, .accepted])
        let uploader = GatewayUploader(configuration: Self.configuration(server.url), firstSequence: 100)
        let (source, continuation) = AsyncThrowingStream<Sighting, any Error>.makeStream()
        for time in 0..<10 { continuation.yield(Self.sighting(Double(time))) }
        continuation.finish()
        try await uploader.run(source: source)
        let statistics = await uploader.statistics
        #expect(statistics.retries == 2)
        #expect(statistics.posted == 10)
        #expect(server.batches.map(\.sequence) == [100, 101, 102])
        #expect(server.batches.flatMap(\.sightings).map(\.time) == (0..<10).map(Double.init))
        try await server.channel.close()
    }

    @Test(arguments: [GatewayUploader.UploadFormat.binary, .json])
    func batchesTravelInTheChosenForm(format: GatewayUploader.UploadFormat) async throws {
        let server = try await ScriptedIngestServer(statuses: [.accepted])
        var configuration = Self.configuration(server.url)
        configuration.uploadFormat = format
        let uploader = GatewayUploader(configuration: configuration, firstSequence: 7)
        for time in 0..<6 { await uploader.enqueue(Self.sighting(Double(time))) }
        try await uploader.flush(onlyFull: false)
        #expect(server.compact == [format == .binary, format == .binary])
        #expect(server.batches.map(\.sequence) == [7, 8])
        #expect(server.batches.flatMap(\.sightings) == (0..<6).map { Self.sighting(Double($0)) })
        try await server.channel.close()
    }

    /// Holds every batch's sightings and sends them all as one batch when asked (edge mode holds
    /// its readings the same way).
    actor HoldingEncoding: UploadEncoding {
        private(set) var held: [Sighting] = []
        private(set) var accepted = 0

        func encode(_ batch: SightingBatch) async throws -> (ByteBuffer, String)? {
            guard batch.sightings.isEmpty else {
                held += batch.sightings
                return nil
            }
            defer { held.removeAll() }
            return (ByteBuffer(bytes: try JSONEncoder().encode(SightingBatch(sequence: batch.sequence, sightings: held))), "application/json")
        }

        func accepted(_ batch: SightingBatch) async throws { accepted += 1 }

        func isDue(stopping: Bool) async -> Bool { stopping && !held.isEmpty }
    }

    @Test func resultsAnEncodingHeldGoUpWhenTheSourceEnds() async throws {
        let server = try await ScriptedIngestServer(statuses: [.accepted])
        let encoding = HoldingEncoding()
        var configuration = Self.configuration(server.url)
        configuration.encoding = encoding
        let uploader = GatewayUploader(configuration: configuration, firstSequence: 100)
        let (source, continuation) = AsyncThrowingStream<Sighting, any Error>.makeStream()
        for time in 0..<10 { continuation.yield(Self.sighting(Double(time))) }
        continuation.finish()
        try await uploader.run(source: source)
        // Batches 100–102 were held (4, 4 and 2 sightings); 103 carried them all.
        #expect(server.batches.map(\.sequence) == [103])
        #expect(server.batches.flatMap(\.sightings).map(\.time) == (0..<10).map(Double.init))
        #expect(await encoding.accepted == 1)
        #expect(await encoding.held.isEmpty)
        #expect(await uploader.statistics.posted == 10)
        try await server.channel.close()
    }

    @Test func aRefusalIsNotRetried() async throws {
        let server = try await ScriptedIngestServer(statuses: [.unauthorized])
        let uploader = GatewayUploader(configuration: Self.configuration(server.url), firstSequence: 0)
        for time in 0..<4 { await uploader.enqueue(Self.sighting(Double(time))) }
        await #expect(throws: GatewayUploader.Refused.self) { try await uploader.flush(onlyFull: false) }
        #expect(await uploader.statistics.retries == 0)
        try await server.channel.close()
    }
}
