import BeaconKit
import BeaconServer
import Foundation
import Glibc

/// A webhook whose receiver accepts connections and never answers, under 10,000 events in
/// batches of 500 (as a busy server publishes them): the server's resident memory before and
/// after, the connections it opened, and the events it dropped and counted.
enum WebhookBenchmark {
    static func run() async throws {
        let silent = try SilentListener()
        let directory = NSTemporaryDirectory() + "proxima-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bench = try await BenchServer.start(.sqliteFile(path: directory + "/webhooks.sqlite"))
        let server = bench.server
        _ = try await bench.store.addWebhook(url: "http://127.0.0.1:\(silent.port)/hook", secret: "a-webhook-secret-of-some-length", siteID: nil)
        let dispatching = Task { await server.webhooks.run() }
        let identity = BeaconIdentity(uuid: UUID(), major: 1, minor: 1)
        let own = getpid()
        // One warm-up batch, so the client's pools and the dispatcher's worker exist before the baseline.
        await server.publisher.publish(try events(from: 0, count: 10, identity: identity), source: "bench")
        let before = ProcessFigures.of(pid: own)?.residentMegabytes ?? 0
        let started = ContinuousClock.now
        for batch in 0..<20 {
            await server.publisher.publish(try events(from: 10 + batch * 500, count: 500, identity: identity), source: "bench")
        }
        let publishing = started.duration(to: .now).seconds
        // Let the dispatcher sort everything, then read the figures while the request still hangs.
        while server.webhooks.queuedEvents + server.webhooks.droppedEvents < 10_000 { await Task.yield() }
        let after = ProcessFigures.of(pid: own)?.residentMegabytes ?? 0
        let dropped = server.webhooks.droppedEvents
        let metric = server.metrics.exposition().split(separator: "\n").first { $0.hasPrefix("proxima_webhook_events_dropped_total ") } ?? "absent"
        print(String(format: "webhook that never answers, 10,000 events: resident %.1f → %.1f MB (%+.1f MB), publishing took %.3f s",
                     before, after, after - before, publishing))
        print("  connections opened: \(silent.accepted), events queued: \(server.webhooks.queuedEvents), dropped: \(dropped); /metrics: \(metric)")
        dispatching.cancel()
        await dispatching.value
        try await bench.stop()
        silent.close()
    }

    static func events(from first: Int, count: Int, identity: BeaconIdentity) throws -> [StoredEvent] {
        try (first..<first + count).map { id in
            try StoredEvent(id: id + 1, gatewayID: "bench", siteID: nil, label: "Bench Store – Department: Electronics \(id)",
                            transition: id % 2 == 0 ? .enter : .exit, identity: identity, time: Double(id))
        }
    }
}

/// A TCP listener on loopback that accepts every connection and never reads or answers.
final class SilentListener: @unchecked Sendable {
    let port: Int
    private let socketDescriptor: Int32
    private let lock = NSLock()
    private var connections: [Int32] = []

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else { throw BenchmarkFailure(description: "cannot listen on loopback") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        socketDescriptor = descriptor
        Thread.detachNewThread { [weak self] in
            while true {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { return }
                guard let self else { return }
                self.lock.withLock { self.connections.append(client) }
            }
        }
    }

    var accepted: Int { lock.withLock { connections.count } }

    func close() {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
        Glibc.close(socketDescriptor)
        lock.withLock { for connection in connections { Glibc.close(connection) } }
    }
}
