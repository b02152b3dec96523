import AsyncHTTPClient
import BeaconServer
import BeaconTesting
import Foundation
import Logging
import NIOCore

/// An in-process server on a loopback port with a fresh store, for the server benchmarks.
struct BenchServer {
    let store: Store
    let database: ProximaDatabase
    let server: ProximaServer
    let sightingsURL: String
    let client: HTTPClient
    private let serving: Task<Void, any Error>
    private let portContinuation: AsyncStream<Int>.Continuation

    /// Each database the benchmarks run on: a SQLite file, and PostgreSQL when installed.
    static func eachDatabase(_ body: (String, DatabaseLocation) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "proxima-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wanted = { (name: String) in ServerBenchmark.onlyRows?.contains { $0.hasPrefix(name + " ") } ?? true }
        if wanted("sqlite") { try await body("sqlite", .sqliteFile(path: directory + "/bench.sqlite")) }
        if !wanted("postgres") { return }
        if PostgresServer.binaryDirectory != nil {
            let url = try PostgresServer.shared().createDatabase(prefix: "bench")
            try await body("postgres", try DatabaseLocation(parsing: url))
        } else {
            print("postgres: skipped (PostgreSQL is not installed)")
        }
    }

    /// Another empty database beside `location`, so each measured row starts from nothing.
    static func fresh(_ location: DatabaseLocation, suffix: String) throws -> DatabaseLocation {
        switch location {
        case .sqliteFile(let path): return .sqliteFile(path: path + "-" + suffix)
        case .sqliteMemory: return .sqliteMemory
        case .postgres: return try DatabaseLocation(parsing: try PostgresServer.shared().createDatabase(prefix: "bench"))
        }
    }

    /// `withServices`: the server's own services run beside it, as in `proxima serve` (the
    /// webhook client, the outbox retry, the streams' once-a-second sweep).
    static func start(_ location: DatabaseLocation, withServices: Bool = false,
                      configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> BenchServer {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let database = try await ProximaDatabase.open(location, logger: logger)
        let store = Store(database: database)
        var configuration = ServerConfiguration(instanceName: "bench")
        configuration.batchesPerSecond = 1_000_000
        configuration.batchBurst = 1_000_000
        configure(&configuration)
        let server = ProximaServer(store: store, configuration: configuration, logger: logger)
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = server.makeApplication(host: "127.0.0.1", port: 0, services: withServices ? server.services : []) { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
        }
        let serving = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        return BenchServer(store: store, database: database, server: server, sightingsURL: "http://127.0.0.1:\(port)/v1/sightings",
                           client: HTTPClient(eventLoopGroupProvider: .singleton), serving: serving, portContinuation: portContinuation)
    }

    /// Posts one pre-encoded batch and fails unless the server took it.
    func post(_ body: ByteBuffer, token: String, contentType: String = "application/json") async throws {
        var request = HTTPClientRequest(url: sightingsURL)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(body)
        let response = try await client.execute(request, timeout: .seconds(120))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard response.status == .accepted else {
            throw BenchmarkFailure(description: "batch refused with \(response.status): \(text)")
        }
    }

    func stop() async throws {
        try await client.shutdown()
        serving.cancel()
        _ = try? await serving.value
        portContinuation.finish()
        await server.shutdown()
        await database.close()
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

extension ContinuousClock.Instant.Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
