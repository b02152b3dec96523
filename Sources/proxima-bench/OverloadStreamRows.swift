import AsyncHTTPClient
import BeaconKit
import BeaconServer
import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Issue 44's stream rows of `proxima-bench overload`: readers that take more than their share.
/// - catch-up: 64 SSE streams of one read-only token start from the first of 500,000 stored
///   events, while `/health` is polled and a gateway posts; `/health` p99, ingestion p95 and the
///   process's memory are taken over a fixed window (goal: `/health` p99 ≤ 50 ms, ≤ +50 MB).
/// - never-read: 200 SSE clients (four tokens) ask for every event and read nothing; the good
///   gateway's p95 is compared with its p95 alone in the same run (goal: within 1.2×).
/// `PROXIMA_BENCH_OVERLOAD_ROWS` (comma-separated: catch-up, never-read) runs only those rows.
enum OverloadStreamRows {
    static let storedEvents = 500_000
    static let catchUpStreams = 64
    static let window: Duration = .seconds(30)
    static let silentClients = 200

    static var wanted: Set<String>? {
        ProcessInfo.processInfo.environment["PROXIMA_BENCH_OVERLOAD_ROWS"].map { Set($0.split(separator: ",").map(String.init)) }
    }

    static func run() async throws {
        if wanted?.contains("catch-up") ?? true { try await catchUp() }
        if wanted?.contains("never-read") ?? true { try await neverRead() }
    }

    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func withServer(_ body: (BenchServer, String) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "proxima-bench-streams-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bench = try await BenchServer.start(.sqliteFile(path: directory + "/bench.sqlite"), withServices: true)
        let base = String(bench.sightingsURL.dropLast("/v1/sightings".count))
        do {
            try await body(bench, base)
        } catch {
            try await bench.stop()
            throw error
        }
        try await bench.stop()
    }

    static func catchUp() async throws {
        try await withServer { bench, base in
            try await seed(storedEvents, store: bench.store)
            let reader = try await bench.store.issueToken(name: "reader", role: .readOnly).token
            let good = try await bench.store.registerGateway(name: "good").1.token
            let quiet = try await sample(bench: bench, base: base, good: good, during: nil)
            let received = ByteCounter()
            var pool = HTTPClient.Configuration()
            pool.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = catchUpStreams + 8
            let readers = HTTPClient(eventLoopGroupProvider: .singleton, configuration: pool)
            let busy = try await sample(bench: bench, base: base, good: good, during: {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<catchUpStreams {
                        group.addTask {
                            var request = HTTPClientRequest(url: base + "/v1/events?after=0&follow=false")
                            request.headers.add(name: "Authorization", value: "Bearer \(reader)")
                            request.headers.add(name: "Accept", value: "text/event-stream")
                            guard let response = try? await readers.execute(request, timeout: .seconds(600)) else { return }
                            do {
                                for try await chunk in response.body { received.add(chunk.readableBytes) }
                            } catch {}
                        }
                    }
                }
            })
            try await readers.shutdown()
            report("catch-up: \(catchUpStreams) streams of one token from the first of \(storedEvents) events", quiet: quiet, busy: busy)
            say(String(format: "  streams received %.0f MB in the window (%.0f MB/s)", Double(received.total) / 1e6,
                       Double(received.total) / 1e6 / window.seconds))
        }
    }

    static func neverRead() async throws {
        try await withServer { bench, base in
            try await seed(50_000, store: bench.store)
            var issued: [String] = []
            for index in 0..<4 { issued.append(try await bench.store.issueToken(name: "screen \(index)", role: .readOnly).token) }
            let tokens = issued
            let good = try await bench.store.registerGateway(name: "good").1.token
            let port = Int(URL(string: base)!.port!)
            let quiet = try await sample(bench: bench, base: base, good: good, during: nil)
            let busy = try await sample(bench: bench, base: base, good: good, during: {
                var sockets: [Int32] = []
                for index in 0..<silentClients {
                    if let socket = openUnreadStream(port: port, token: tokens[index % tokens.count]) { sockets.append(socket) }
                }
                // Held open, unread, until the window ends (the task is cancelled).
                while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(100)) }
                for socket in sockets { close(socket) }
            })
            report("never-read: \(silentClients) SSE clients from the first of 50,000 events, reading nothing", quiet: quiet, busy: busy)
            let metrics = bench.server.metrics.exposition().split(separator: "\n").filter { $0.hasPrefix("proxima_event_streams_slow_closed_total") }
            say("  " + (metrics.first.map(String.init) ?? "proxima_event_streams_slow_closed_total: not counted by this build"))
        }
    }

    struct Sample {
        var health: [Double]
        var batches: [Double]
        var baseMegabytes: Double
        var peakMegabytes: Double
    }

    /// Over `window`: `/health` every 20 ms and a 50-sighting batch every 50 ms, each timed, and
    /// the process's resident memory every 250 ms, while `during` runs (then cancelled).
    static func sample(bench: BenchServer, base: String, good: String, during: (@Sendable () async -> Void)?) async throws -> Sample {
        let baseMegabytes = ProcessFigures.of(pid: getpid())?.residentMegabytes ?? 0
        let load = during.map { work in Task { await work() } }
        let clock = ContinuousClock()
        let end = clock.now + window
        async let health: [Double] = {
            var times: [Double] = []
            while clock.now < end {
                let start = clock.now
                var request = HTTPClientRequest(url: base + "/health")
                request.headers.add(name: "Connection", value: "keep-alive")
                if let response = try? await bench.client.execute(request, timeout: .seconds(60)) {
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    times.append(start.duration(to: clock.now).seconds * 1000)
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return times
        }()
        async let peak: Double = {
            var most = 0.0
            while clock.now < end {
                most = max(most, ProcessFigures.of(pid: getpid())?.residentMegabytes ?? 0)
                try? await Task.sleep(for: .milliseconds(250))
            }
            return most
        }()
        var batches: [Double] = []
        var sequence = Int.random(in: 0..<1_000_000_000)
        while clock.now < end {
            let body = try OverloadBenchmark.batch(sequence: sequence, receiver: "good") { _ in
                BeaconIdentity(uuid: OverloadBenchmark.goodUUID, major: 1, minor: 1)
            }
            sequence += 1
            let start = clock.now
            if (try? await bench.post(body, token: good)) != nil { batches.append(start.duration(to: clock.now).seconds * 1000) }
            try await Task.sleep(for: .milliseconds(50))
        }
        load?.cancel()
        _ = await load?.value
        return Sample(health: await health, batches: batches, baseMegabytes: baseMegabytes, peakMegabytes: await peak)
    }

    static func percentile(_ values: [Double], _ share: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * share))]
    }

    static func report(_ name: String, quiet: Sample, busy: Sample) {
        say(name)
        for (label, sample) in [("  alone", quiet), ("  during", busy)] {
            say(String(format: "%@: /health p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d); batches p50 %.1f ms, p95 %.1f ms (%d); memory %.0f MB, peak %.0f MB",
                       label, percentile(sample.health, 0.5), percentile(sample.health, 0.99), sample.health.max() ?? .nan, sample.health.count,
                       percentile(sample.batches, 0.5), percentile(sample.batches, 0.95), sample.batches.count,
                       sample.baseMegabytes, sample.peakMegabytes))
        }
        say(String(format: "  batch p95 during / alone: %.2f; memory peak during - before: %+.0f MB",
                   percentile(busy.batches, 0.95) / percentile(quiet.batches, 0.95), busy.peakMegabytes - busy.baseMegabytes))
    }

    /// Enters straight into the table, in one statement (SQLite).
    static func seed(_ count: Int, store: Store) async throws {
        try await store.database.transaction { db in
            try await db.raw("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(unsafeRaw: String(count)))
                INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at)
                SELECT 'door', 'enter', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, i % 100, NULL, 'Bloomington Office – Mordor', i, 0 FROM n
                """).run()
        }
    }

    /// A following SSE request from the first event on a socket with a small receive buffer,
    /// never read.
    static func openUnreadStream(port: Int, token: String) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var size: Int32 = 4096
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let request = Array("GET /v1/events?after=0&follow=true HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8)
        guard connected == 0, send(socket, request, request.count, 0) == request.count else {
            close(socket)
            return nil
        }
        return socket
    }
}

/// Bytes received by many streams, added from their tasks.
final class ByteCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add(_ bytes: Int) { lock.withLock { count += bytes } }
    var total: Int { lock.withLock { count } }
}
