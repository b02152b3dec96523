import AsyncHTTPClient
import BeaconKit
import BeaconServer
import Foundation
import NIOCore
import NIOFoundationCompat

/// Issue 16, item 5: the latency a well-behaved gateway sees while someone abuses the server.
/// One gateway posts a batch of 50 sightings every 50 ms and every post is timed, first alone,
/// then during each abuse (docs/reliability.md, "Overload and abuse"). SQLite, loopback HTTP.
enum OverloadBenchmark {
    static let goodBatches = 100

    static func run() async throws {
        // PROXIMA_BENCH_OVERLOAD_ROWS names rows to run alone ("abuse" is this file's).
        if OverloadStreamRows.wanted?.contains("abuse") ?? true { try await abuse() }
        try await OverloadStreamRows.run()
    }

    static func abuse() async throws {
        let directory = NSTemporaryDirectory() + "proxima-bench-overload-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bench = try await BenchServer.start(.sqliteFile(path: directory + "/bench.sqlite")) { configuration in
            // The abusive gateway's own rate limit; the good gateway posts far below it.
            configuration.batchesPerSecond = 20
            configuration.batchBurst = 40
        }
        let good = try await bench.store.registerGateway(name: "good").1.token
        let rogue = try await bench.store.registerGateway(name: "rogue").1.token
        let reader = try await bench.store.issueToken(name: "reader", role: .readOnly).token
        let base = String(bench.sightingsURL.dropLast("/v1/sightings".count))
        // The abuser has a client (and connection pool) of its own, as another machine would:
        // sharing the good gateway's would measure the pool, not the server.
        var poolConfiguration = HTTPClient.Configuration()
        poolConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 128
        let abuserClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: poolConfiguration)
        var sequence = 0

        func measure(_ name: String, abuse: (@Sendable () async -> Int)?) async throws {
            let abuser = abuse.map { work in Task { await work() } }
            try await Task.sleep(for: .milliseconds(300))
            var times: [Double] = []
            var failures = 0
            let clock = ContinuousClock()
            for _ in 0..<goodBatches {
                let body = try batch(sequence: sequence, receiver: "good", identity: { _ in BeaconIdentity(uuid: goodUUID, major: 1, minor: 1) })
                sequence += 1
                let start = clock.now
                do {
                    try await bench.post(body, token: good)
                    times.append(start.duration(to: clock.now).seconds * 1000)
                } catch {
                    failures += 1
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            abuser?.cancel()
            let requests = await abuser?.value ?? 0
            let sorted = times.sorted()
            // Written unbuffered, so a later scenario that fails leaves the earlier figures.
            func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
            guard !sorted.isEmpty else {
                say("\(name): no batch of the good gateway was taken (\(failures) failed); abuser sent \(requests) requests")
                return
            }
            say(String(format: "%@: good gateway %d batches taken, %d failed: median %.1f ms, p95 %.1f ms, slowest %.1f ms; abuser sent %d requests",
                       name, times.count, failures, sorted[sorted.count / 2], sorted[sorted.count * 95 / 100], sorted[sorted.count - 1], requests))
        }

        try await measure("alone", abuse: nil)
        try await measure("a gateway at 10x its rate (200 batches/s against 20)", abuse: {
            await flood(every: .milliseconds(5)) { n in
                try await send(abuserClient, url: bench.sightingsURL, token: rogue, body: try batch(sequence: 1_000_000 + n, receiver: "rogue") { _ in
                    BeaconIdentity(uuid: goodUUID, major: 2, minor: 1)
                })
            }
        })
        try await measure("10,000 random minors under one UUID (batches of 500)", abuse: {
            await flood(every: .milliseconds(250)) { n in
                var generator = SystemRandomNumberGenerator()
                let minors = (0..<500).map { _ in UInt16.random(in: 0...UInt16.max, using: &generator) }
                try await send(abuserClient, url: bench.sightingsURL, token: rogue, body: try batch(sequence: 2_000_000 + n, receiver: "rogue", count: 500) {
                    BeaconIdentity(uuid: rogueUUID, major: 1, minor: minors[$0])
                })
            }
        })
        try await measure("wrong tokens as fast as one client can", abuse: {
            await flood(every: .zero) { n in
                try await send(abuserClient, url: base + "/v1/sites", token: "px_guess-\(n)", body: nil)
            }
        })
        try await measure("one client opening event streams (64 held, the rest refused)", abuse: {
            await flood(every: .milliseconds(2), inFlight: 128) { _ in
                var request = HTTPClientRequest(url: base + "/v1/events?follow=true")
                request.headers.add(name: "Authorization", value: "Bearer \(reader)")
                request.headers.add(name: "Accept", value: "text/event-stream")
                let response = try await abuserClient.execute(request, timeout: .seconds(30))
                // A held stream stays open until the abuse ends (the task is cancelled).
                if response.status == .ok { for try await _ in response.body {} }
            }
        })
        try await abuserClient.shutdown()
        try await bench.stop()
    }

    static let goodUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let rogueUUID = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!

    /// Runs `send` again and again, at most `inFlight` at once (streams stay open, so their
    /// abuser needs more than the 64 a token may hold), until cancelled; returns how many were
    /// started. Refusals and failures are the point, not errors. An unbounded number in flight
    /// measured the benchmark's own queue: the identity flood never ended.
    static func flood(every pause: Duration, inFlight: Int = 16, _ send: @escaping @Sendable (Int) async throws -> Void) async -> Int {
        await withTaskGroup(of: Void.self) { group in
            var started = 0
            var running = 0
            while !Task.isCancelled {
                let n = started
                group.addTask { try? await send(n) }
                started += 1
                running += 1
                if running >= inFlight {
                    await group.next()
                    running -= 1
                }
                if pause > .zero { try? await Task.sleep(for: pause) } else { await Task.yield() }
            }
            group.cancelAll()
            return started
        }
    }

    static func send(_ client: HTTPClient, url: String, token: String, body: ByteBuffer?) async throws {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
    }

    /// `count` sightings 10 ms apart ending now, of the identity `identity(index)` gives.
    static func batch(sequence: Int, receiver: String, count: Int = 50, identity: (Int) -> BeaconIdentity) throws -> ByteBuffer {
        let now = Date().timeIntervalSince1970
        let sightings = (0..<count).map { index in
            Sighting(time: now - Double(count - index) * 0.01, receiver: receiver, address: BluetoothAddress(rawValue: UInt64(index + 1)),
                     rssi: -60, frame: .iBeacon(IBeaconFrame(identity: identity(index))))
        }
        return ByteBuffer(data: try JSONEncoder().encode(SightingBatch(sequence: sequence, sightings: sightings)))
    }
}
