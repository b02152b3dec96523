import AsyncHTTPClient
@testable import BeaconServer
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import Testing

/// `proxima serve` runs the database, the webhook client and the HTTP application as one
/// service group (issue 9, item 10); a graceful shutdown stops all three, nothing by hand.
@Suite("Service lifecycle")
struct ServiceLifecycleTests {
    // Awaits a condition with no deadline of its own: the limit turns a hang into a failure.
    @Test(.timeLimit(.minutes(10))) func aGracefulShutdownStopsTheServerThenTheClientThenTheDatabase() async throws {
        let path = NSTemporaryDirectory() + "proxima-lifecycle-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        var options = ServeRunner.Options()
        options.database = .sqliteFile(path: path)
        options.port = 0
        options.adminToken = "px_lifecycle-admin-token-0123456789"
        // The runner announces each line through this, and the group's end closes it, so the
        // test waits for the address (or the reason there is none) without polling.
        let (announced, announcer) = AsyncStream.makeStream(of: String.self)
        let (group, server) = try await ServeRunner.serviceGroup(options, logger: Logger(label: "test"), gracefulShutdownSignals: []) { line in
            announcer.yield(line)
        }
        let ended = NIOLockedValueBox<String?>(nil)
        let running = Task {
            do {
                try await group.run()
                ended.withLockedValue { $0 = "the service group ended" }
                announcer.finish()
            } catch {
                ended.withLockedValue { $0 = "the service group failed: \(error)" }
                announcer.finish()
                throw error
            }
        }
        var address: String?
        for await line in announced where line.hasPrefix("listening on ") {
            address = line.split(separator: " ").dropFirst(2).first.map(String.init)
            break
        }
        let base = try #require(address, "the server never announced its address: \(ended.withLockedValue { $0 } ?? "no reason given")")
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/health"), timeout: .seconds(10))
        #expect(response.status == .ok)
        // Migrations ran inside the group: the admin token from the options was stored.
        #expect(try await server.store.authenticate(token: options.adminToken!)?.role == .admin)

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(server.store.database.sqliteClosed.withLock { $0 }, "the database service did not close the connection")
        await #expect(throws: HTTPClientError.alreadyShutdown) { try await server.httpClient.shutdown() }
        await #expect(throws: (any Error).self) {
            _ = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/health"), timeout: .seconds(10))
        }
    }
}
