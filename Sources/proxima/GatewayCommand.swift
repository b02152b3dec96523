import ArgumentParser
import BeaconGateway
import Foundation
import Logging

struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Scan any source and post the sightings to a Proxima server in batches.",
        discussion: "Batches are retried until the server takes them; while it is unreachable, up to --buffer sightings wait (oldest dropped first)."
    )

    @Option(help: "The server's base URL, e.g. http://127.0.0.1:8080.")
    var server: String

    @Option(help: "The gateway token from POST /v1/gateways (or PROXIMA_GATEWAY_TOKEN).")
    var token: String?

    @Option(help: "Sightings per batch (at most 5000).")
    var batch = 500

    @Option(help: "Most sightings kept while the server is unreachable.")
    var buffer = 100_000

    @Option(help: "Seconds between posts of a partial batch.")
    var interval: Double = 0.5

    @OptionGroup var source: SourceOptions

    func validate() throws {
        guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--server must be an http:// or https:// URL, got '\(server)'")
        }
        guard (1...5000).contains(batch) else { throw ValidationError("--batch must be in 1…5000, got \(batch)") }
        guard buffer >= batch else { throw ValidationError("--buffer must hold at least one batch (\(batch)), got \(buffer)") }
        guard interval > 0 else { throw ValidationError("--interval must be positive, got \(interval)") }
        guard resolvedToken != nil else { throw ValidationError("give the gateway token with --token or PROXIMA_GATEWAY_TOKEN") }
    }

    var resolvedToken: String? { token ?? ProcessInfo.processInfo.environment["PROXIMA_GATEWAY_TOKEN"] }

    func run() async throws {
        var configuration = GatewayUploader.Configuration(server: URL(string: server)!, token: resolvedToken ?? "")
        configuration.batchSize = batch
        configuration.bufferLimit = buffer
        configuration.flushInterval = .milliseconds(Int64(interval * 1000))
        let uploader = GatewayUploader(configuration: configuration)
        try await uploader.run(source: try await source.open().sightings)
        let statistics = await uploader.statistics
        try StandardOutput.line("posted \(statistics.posted) sightings in \(statistics.batches) batches (\(statistics.retries) retries, \(statistics.dropped) dropped)")
    }
}
