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
    @Test func aGracefulShutdownStopsTheServerThenTheClientThenTheDatabase() async throws {
        let path = NSTemporaryDirectory() + "proxima-lifecycle-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        var options = ServeRunner.Options()
        options.database = .sqliteFile(path: path)
        options.port = 0
        options.adminToken = "px_lifecycle-admin-token-0123456789"
        let lines = NIOLockedValueBox<[String]>([])
        let (group, server) = try await ServeRunner.serviceGroup(options, logger: Logger(label: "test"), gracefulShutdownSignals: []) { line in
            lines.withLockedValue { $0.append(line) }
        }
        let ended = NIOLockedValueBox<String?>(nil)
        let running = Task {
            do {
                try await group.run()
                ended.withLockedValue { $0 = "the service group ended" }
            } catch {
                ended.withLockedValue { $0 = "the service group failed: \(error)" }
                throw error
            }
        }
        var address: String?
        // Generous: the server starts inside the test process, on the cooperative threads that
        // pass 1's hundreds of parallel tests share. Alone it announces within a second; on
        // 2-core CI runs it twice had not within 120 and 300 s, while tests that ran `proxima`
        // blocked cooperative threads for whole child runs (they no longer do). A group that
        // ends first fails at once, with its reason.
        let deadline = ContinuousClock.now + .seconds(300)
        while address == nil, ContinuousClock.now < deadline, ended.withLockedValue({ $0 }) == nil {
            address = lines.withLockedValue { $0 }.first { $0.hasPrefix("listening on ") }?
                .split(separator: " ").dropFirst(2).first.map(String.init)
            if address == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let base = try #require(address, "the server never announced its address: \(ended.withLockedValue { $0 } ?? "still starting after 300 s")")
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
