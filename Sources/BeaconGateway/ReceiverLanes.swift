import AsyncHTTPClient
import BeaconKit
import Foundation
import Logging

/// Posts one source that holds several receivers (a simulation, a merged replay) as several
/// gateways: each receiver's sightings go with its own gateway token, in time order.
///
/// A server judges gateways on the clock of their sightings (a gateway that reports nothing for
/// 30 s is offline). One uploader per receiver racing at full speed would drift apart, and the
/// slowest would look offline; here one reader cuts the stream into slices of sighting time and
/// each receiver posts what it heard in a slice when the slice ends. Receivers' slices are
/// staggered, so batches reach the server evenly and no receiver lags the newest batch by more
/// than about one slice. A receiver that heard nothing posts nothing, as a dead gateway would.
public struct ReceiverLanes: Sendable {
    public struct Configuration: Sendable {
        public var server: URL
        /// Gateway token per receiver name; sightings of other receivers are not posted.
        public var tokens: [String: String]
        /// Seconds of sighting time each receiver's batch covers (fewer, larger batches when longer).
        public var slice: Double = 5
        /// Most sightings per batch; a receiver posts early when it holds this many.
        public var batchSize = 5000
        public var uploadFormat = GatewayUploader.UploadFormat.binary

        public init(server: URL, tokens: [String: String]) {
            self.server = server
            self.tokens = tokens
        }
    }

    public struct Statistics: Sendable, Hashable {
        public var postedByReceiver: [String: Int] = [:]
        public var batches = 0
        public var retries = 0
        /// Sightings of receivers without a token.
        public var unrouted = 0
    }

    public let configuration: Configuration
    let client: HTTPClient
    let logger: Logger

    public init(configuration: Configuration, client: HTTPClient = .shared, logger: Logger = Logger(label: "proxima.gateway")) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
    }

    /// Reads the source (in time order) to its end and posts everything routed.
    public func run(source: AsyncThrowingStream<Sighting, any Error>) async throws -> Statistics {
        let names = configuration.tokens.keys.sorted()
        var lanes: [String: Lane] = [:]
        for (index, name) in names.enumerated() {
            var uploader = GatewayUploader.Configuration(server: configuration.server, token: configuration.tokens[name] ?? "")
            uploader.batchSize = configuration.batchSize
            uploader.uploadFormat = configuration.uploadFormat
            uploader.bufferLimit = max(configuration.batchSize, 1_000_000)
            lanes[name] = Lane(uploader: GatewayUploader(configuration: uploader, client: client, logger: logger),
                               offset: configuration.slice * Double(index) / Double(max(1, names.count)))
        }
        var statistics = Statistics()
        var schedule = LaneSchedule(lanes: names.map { ($0, lanes[$0]!.offset) }, slice: configuration.slice)
        for try await sighting in source {
            guard let lane = lanes[sighting.receiver] else {
                statistics.unrouted += 1
                continue
            }
            while let due = schedule.nextDue(before: sighting.time) {
                try await lanes[due]!.uploader.flush(onlyFull: false)
            }
            await lane.uploader.enqueue(sighting)
            if await lane.uploader.pending >= configuration.batchSize {
                try await lane.uploader.flush(onlyFull: true)
            }
        }
        while let due = schedule.nextDue(before: .infinity, draining: true) {
            try await lanes[due]!.uploader.flush(onlyFull: false)
        }
        for name in names {
            let uploaded = await lanes[name]!.uploader.statistics
            statistics.postedByReceiver[name] = uploaded.posted
            statistics.batches += uploaded.batches
            statistics.retries += uploaded.retries
        }
        return statistics
    }

    struct Lane {
        var uploader: GatewayUploader
        var offset: Double
    }
}

/// When each receiver's slice ends: receiver i's slices end at `slice·(k + i/n)`. Pure, so the
/// order of posts can be tested without a server.
struct LaneSchedule: Sendable {
    private var due: [(name: String, time: Double)]
    let slice: Double
    private var drained: Set<String> = []

    init(lanes: [(name: String, offset: Double)], slice: Double) {
        self.slice = slice
        due = lanes.map { ($0.name, $0.offset > 0 ? $0.offset : slice) }
    }

    /// The receiver whose slice ends first, if it ends at or before `time`; its next slice is
    /// then scheduled. With `draining`, each receiver is named once more at the end.
    mutating func nextDue(before time: Double, draining: Bool = false) -> String? {
        if draining {
            guard let next = due.indices.filter({ !drained.contains(due[$0].name) }).min(by: { due[$0].time < due[$1].time }) else { return nil }
            drained.insert(due[next].name)
            return due[next].name
        }
        guard let next = due.indices.min(by: { due[$0].time < due[$1].time }), due[next].time <= time else { return nil }
        due[next].time += slice
        return due[next].name
    }
}
