import ArgumentParser
import AsyncHTTPClient
import BeaconGateway
import BeaconKit
import Foundation
import Logging
import NIOSSL

struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Scan any source and post the sightings to a Proxima server in batches.",
        discussion: """
            Batches are retried until the server takes them; while it is unreachable, up to --buffer sightings wait (oldest dropped first). \
            With --mqtt the gateway also runs the engine itself on the --region regions (or the scenario's) and publishes enter/exit \
            events, states, ranging and Home Assistant discovery to the broker (docs/mqtt.md); --server is then optional.
            """
    )

    @OptionGroup var configurationFile: ConfigurationFileOptions

    @Option(help: "The server's base URL, e.g. http://127.0.0.1:8080 (optional with --mqtt).")
    var server: String?

    @Option(help: "The gateway token from POST /v1/gateways (or PROXIMA_GATEWAY_TOKEN).")
    var token: String?

    @Option(help: "Sightings per batch (at most 5000).")
    var batch = 500

    @Option(help: "The batches' form: binary (compact, the default) or json (for servers that do not read the compact form).")
    var uploadFormat = GatewayUploader.UploadFormat.binary

    @Option(help: "Most sightings kept while the server is unreachable.")
    var buffer = 100_000

    @Option(help: "Seconds between posts of a partial batch.")
    var interval: Double = 0.5

    @Option(help: "Seconds a stopping gateway (SIGTERM or SIGINT) keeps trying to post what it buffered before it exits (0.1–60).")
    var stopGrace: Double = 1

    @Option(help: ArgumentHelp("Post one receiver of a multi-receiver source (a simulation) as its own gateway; repeat for each. Receivers without a token are not posted.",
                               valueName: "RECEIVER=TOKEN"))
    var receiverToken: [String] = []

    @Option(help: "With --receiver-token: seconds of sighting time each receiver's batch covers; receivers post in turn, in time order.")
    var slice: Double = 5

    @Option(help: "Trust this PEM certificate authority for an https:// --server (instead of the system's).")
    var caFile: String?

    @Flag(help: "Run the server's per-gateway engine here and post only its enter/exit events and ranging readings, not every sighting (docs/server.md, edge batches).")
    var edge = false

    @Option(help: "With --edge: the file keeping the engine's checkpoint across restarts (default: edge-<token digest>.json in the configuration directory).")
    var edgeCheckpoint: String?

    @Option(help: "With --edge: seconds between posts that carry only ranging readings (each beacon's latest); enters and exits go up with the next batch (--interval).")
    var edgeInterval: Double = 30

    @OptionGroup var source: SourceOptions
    @OptionGroup var engine: EngineOptions
    @OptionGroup var mqttOptions: MQTTOptions

    func validate() throws {
        guard (0.1...60).contains(stopGrace) else { throw ValidationError("--stop-grace must be in 0.1…60 seconds, got \(stopGrace)") }
        guard let server else {
            guard mqttOptions.mqtt != nil else { throw ValidationError("give --server URL, --mqtt URL or both") }
            if token != nil || !receiverToken.isEmpty { throw ValidationError("--token and --receiver-token need --server URL") }
            return
        }
        guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--server must be an http:// or https:// URL, got '\(server)'")
        }
        guard (1...5000).contains(batch) else { throw ValidationError("--batch must be in 1…5000, got \(batch)") }
        guard buffer >= batch else { throw ValidationError("--buffer must hold at least one batch (\(batch)), got \(buffer)") }
        guard interval > 0 else { throw ValidationError("--interval must be positive, got \(interval)") }
        guard slice > 0 && slice <= 25 else {
            throw ValidationError("--slice must be in (0, 25] seconds, under the server's 30 s gateway timeout; got \(slice)")
        }
        _ = try receiverTokens()
        if edge && !receiverToken.isEmpty { throw ValidationError("--edge posts one gateway's engine results: give --token, not --receiver-token") }
        if edgeCheckpoint != nil && !edge { throw ValidationError("--edge-checkpoint needs --edge") }
        guard edgeInterval > 0, edgeInterval.isFinite else { throw ValidationError("--edge-interval must be a positive number of seconds, got \(edgeInterval)") }
        if let caFile {
            do { _ = try NIOSSLCertificate.fromPEMFile(caFile) } catch {
                throw ValidationError("--ca-file: cannot read a PEM certificate from \(caFile): \(error)")
            }
        }
        guard resolvedToken != nil || !receiverToken.isEmpty else {
            throw ValidationError("give the gateway token with --token or PROXIMA_GATEWAY_TOKEN, or one --receiver-token per receiver")
        }
        if !receiverToken.isEmpty && token != nil { throw ValidationError("give either --token or --receiver-token, not both") }
    }

    /// The `--receiver-token RECEIVER=TOKEN` pairs by receiver name.
    func receiverTokens() throws -> [String: String] {
        var tokens: [String: String] = [:]
        for (index, pair) in receiverToken.enumerated() {
            guard let equals = pair.lastIndex(of: "="), equals != pair.startIndex, pair.index(after: equals) != pair.endIndex else {
                throw ValidationError("--receiver-token #\(index + 1) must be RECEIVER=TOKEN, got '\(pair.prefix(80))'")
            }
            let name = String(pair[..<equals])
            guard tokens.updateValue(String(pair[pair.index(after: equals)...]), forKey: name) == nil else {
                throw ValidationError("--receiver-token #\(index + 1): receiver '\(name)' has a token already")
            }
        }
        return tokens
    }

    /// One checkpoint file per gateway token, so two gateways on one machine keep apart (FNV-1a
    /// of the token: stable across runs, and the token itself never appears in a file name).
    static func defaultEdgeCheckpoint(token: String) -> String {
        let hash = FNV1a.hash(token)
        let directory = ConfigurationDirectory.url()
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("edge-\(String(hash, radix: 16)).json").path
    }

    var resolvedToken: String? { token ?? ProcessInfo.processInfo.environment["PROXIMA_GATEWAY_TOKEN"] }

    /// How long a stopping gateway keeps trying to post what it buffered (`--stop-grace`): a
    /// service manager waits a few seconds before it kills, and an unreachable server must not
    /// hold the stop.
    var stopGraceDuration: Duration { .milliseconds(Int((stopGrace * 1000).rounded())) }

    func run() async throws {
        // SIGINT or SIGTERM ends the source; what was read is still posted, for up to
        // `--stop-grace`, before exiting (a second signal, once the first has been handled, ends
        // the process at once).
        let opened = try await self.source.open()
        let (stopRequests, stopRequested) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let source = StoppableSource(opened) { number in
            printError("\(ProcessSignals.name(number)) received: posting what is buffered, then stopping")
            signal(number, SIG_DFL)
            stopRequested.yield()
        }
        defer { source.finish() }
        guard mqttOptions.mqtt != nil else {
            try await postUntilStopped(source.sightings, stopRequests: stopRequests)
            return
        }
        let regions = try engine.allRegions(simulatedRegions: try self.source.loadScenario()?.monitoringRegions ?? [])
        let publisher = try await mqttOptions.start(receiver: engine.receiver, pathLossExponent: engine.exponent)
        var engineSightings = source.sightings
        var upload: Task<Void, any Error>?
        if server != nil {
            let (toServer, toEngine) = Self.split(source.sightings)
            engineSightings = toEngine
            upload = Task { try await postUntilStopped(toServer, stopRequests: stopRequests) }
        }
        let engineSource = SightingSource(sightings: engineSightings, timing: opened.timing, description: opened.description, stop: opened.stop)
        do {
            try await engine.run(opened: engineSource, monitoring: regions, ranging: regions, mqtt: publisher) { event in
                if engine.json {
                    if case .didRange = event { return }
                    try StandardOutput.jsonLine(event)
                } else if let line = MonitorTable.line(for: event) {
                    try StandardOutput.line(line)
                }
            }
        } catch {
            upload?.cancel()
            throw error
        }
        try await upload?.value
    }

    /// Two copies of one stream, for the server and the engine. Bounded, and never lossy: the
    /// faster reader waits for the slower one.
    static func split(_ sightings: AsyncThrowingStream<Sighting, any Error>)
        -> (AsyncThrowingStream<Sighting, any Error>, AsyncThrowingStream<Sighting, any Error>) {
        let (first, firstContinuation) = AsyncThrowingStream<Sighting, any Error>.makeStream(bufferingPolicy: .bufferingOldest(4096))
        let (second, secondContinuation) = AsyncThrowingStream<Sighting, any Error>.makeStream(bufferingPolicy: .bufferingOldest(4096))
        let reader = Task {
            do {
                for try await sighting in sightings {
                    for continuation in [firstContinuation, secondContinuation] {
                        while case .dropped = continuation.yield(sighting) { try await Task.sleep(for: .milliseconds(1)) }
                    }
                }
                firstContinuation.finish()
                secondContinuation.finish()
            } catch {
                firstContinuation.finish(throwing: error)
                secondContinuation.finish(throwing: error)
            }
        }
        firstContinuation.onTermination = { _ in reader.cancel() }
        return (first, second)
    }

    /// Posts until the source ends; once a stop was requested, gives up after `--stop-grace`
    /// with an error that names the server.
    func postUntilStopped(_ sightings: AsyncThrowingStream<Sighting, any Error>, stopRequests: AsyncStream<Void>) async throws {
        let posting = Task { try await postWithClient(sightings) }
        let deadline = Task {
            for await _ in stopRequests {
                try await Task.sleep(for: stopGraceDuration)
                posting.cancel()
                return true
            }
            return false
        }
        defer { deadline.cancel() }
        do {
            try await posting.value
        } catch {
            deadline.cancel()
            guard (try? await deadline.value) == true else { throw error }
            let detail = error is CancellationError ? "" : " (\(error))"
            printError("stopped with sightings unposted: \(server ?? "the server") did not take them within \(stopGraceDuration) of the signal\(detail)")
            throw ExitCode.failure
        }
    }

    func postWithClient(_ sightings: AsyncThrowingStream<Sighting, any Error>) async throws {
        let client = try makeClient()
        do {
            try await post(sightings, client: client)
        } catch {
            if caFile != nil { try? await client.shutdown() }
            throw error
        }
        if caFile != nil { try await client.shutdown() }
    }

    /// The shared client, or one that trusts `--ca-file` (closed after the run).
    func makeClient() throws -> HTTPClient {
        guard let caFile else { return .shared }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caFile)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
    }

    func post(_ sightings: AsyncThrowingStream<Sighting, any Error>, client: HTTPClient) async throws {
        guard let server else { return }
        if !receiverToken.isEmpty {
            var configuration = ReceiverLanes.Configuration(server: URL(string: server)!, tokens: try receiverTokens())
            configuration.slice = slice
            configuration.batchSize = batch
            configuration.uploadFormat = uploadFormat
            let statistics = try await ReceiverLanes(configuration: configuration, client: client).run(source: sightings)
            for (name, posted) in statistics.postedByReceiver.sorted(by: { $0.key < $1.key }) {
                try StandardOutput.line("\(name): posted \(posted) sightings")
            }
            try StandardOutput.line("posted \(statistics.postedByReceiver.values.reduce(0, +)) sightings in \(statistics.batches) batches (\(statistics.retries) retries, \(statistics.unrouted) of receivers without a token not posted)")
            return
        }
        var configuration = GatewayUploader.Configuration(server: URL(string: server)!, token: resolvedToken ?? "")
        configuration.batchSize = batch
        configuration.bufferLimit = buffer
        configuration.uploadFormat = uploadFormat
        configuration.flushInterval = .milliseconds(Int64(interval * 1000))
        let edgeEncoding = edge ? try EdgeUploadEncoding(settings: GatewaySettings(exitRule: engine.exitRule.rule),
                                                          checkpointPath: edgeCheckpoint ?? Self.defaultEdgeCheckpoint(token: resolvedToken ?? ""),
                                                          readingInterval: edgeInterval) : nil
        configuration.encoding = edgeEncoding
        let uploader = GatewayUploader(configuration: configuration, client: client)
        try await uploader.run(source: sightings)
        let statistics = await uploader.statistics
        try StandardOutput.line("posted \(statistics.posted) sightings in \(statistics.batches) batches (\(statistics.retries) retries, \(statistics.dropped) dropped)")
        if let edgeEncoding {
            try StandardOutput.line("edge: \(await edgeEncoding.sightings) sightings went up as \(await edgeEncoding.uploadedBytes) bytes of engine results in \(await edgeEncoding.posts) posts")
        }
    }
}
