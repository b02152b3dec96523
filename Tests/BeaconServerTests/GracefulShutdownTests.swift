import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

/// A following event stream must not hold the server's graceful shutdown: before this was
/// fixed, `proxima serve` given SIGTERM with one SSE client connected never exited while the
/// client stayed (seen for 20 minutes), so `systemctl stop` waited for its kill timeout.
@Suite struct GracefulShutdownTests {
    @Test func aFollowingEventStreamEndsWhenTheServerStops() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-shutdown-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(folder.path)/proxima.sqlite", instance: "shutdown")
        defer { server.stop() }

        var request = HTTPClientRequest(url: base.appendingPathComponent("v1/events").absoluteString + "?follow=true")
        request.headers.add(name: "Authorization", value: "Bearer \(ProximaProcess.adminToken)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        #expect(response.status == .ok)
        #expect(response.headers.first(name: "content-type") == "text/event-stream")

        // The stream is open and idle; now ask the server to stop.
        server.process.terminate()
        let streamEnded = Task {
            var bytes = 0
            for try await chunk in response.body { bytes += chunk.readableBytes }
            return bytes
        }
        let status = try await server.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "serve should exit cleanly on SIGTERM: \(server.outputText.suffix(1000))")
        _ = try? await streamEnded.value
        #expect(!server.process.isRunning)
    }
}
