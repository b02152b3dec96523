import AsyncHTTPClient
import Foundation
import NIOCore
import BeaconTesting
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

/// `proxima gateway` given SIGTERM (systemctl stop) posts what it has buffered, then exits 0,
/// instead of dying with the buffer unposted.
@Suite struct GatewayStopTests {
    @Test func aStoppedGatewayPostsWhatItHeld() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-gateway-stop-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Simulated time starts in 1970: let the server take sightings that old.
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(folder.path)/proxima.sqlite", instance: "gateway-stop",
                                                            extra: ["--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        struct NewGateway: Encodable { var name: String }
        struct Registered: Decodable { var token: String }
        let token = try await admin.send("POST", "/v1/gateways", NewGateway(name: "shelf"), as: Registered.self).token

        // Real-time pacing and a long flush interval: everything heard stays buffered until
        // the gateway is stopped.
        let scenario = BTVirt.packageRoot.appendingPathComponent("examples/retail.json").path
        let gateway = try ProximaProcess(["gateway", "--server", base.absoluteString, "--token", token,
                                          "--simulate", scenario, "--speed", "1", "--batch", "5000", "--interval", "600",
                                          // A debug server beside a full test run once took over the default second to answer.
                                          "--stop-grace", "20"])
        // SIGTERM only once the gateway handles it (a debug binary on a loaded CI host once took
        // longer than a fixed 3 s to start, and died of the default action with nothing said),
        // then a couple of seconds of sightings to hold.
        let deadline = ContinuousClock.now.advanced(by: .seconds(180))
        while !Self.handlesTerminate(gateway.process.processIdentifier), gateway.process.isRunning, ContinuousClock.now < deadline {
            // Waits on the child `proxima gateway` installing its SIGTERM handler.
            try await Task.sleep(for: .milliseconds(50))
        }
        // Waits on the child `proxima gateway` hearing two real-time seconds of sightings to hold.
        try await Task.sleep(for: .seconds(2))
        gateway.process.terminate()
        let status = try await gateway.waitForExit(timeout: .seconds(60))
        #expect(status == 0 && gateway.process.terminationReason == .exit, "\(gateway.outputText)")
        #expect(gateway.outputText.contains("SIGTERM received: posting what is buffered"), "\(gateway.outputText)")
        let posted = gateway.outputText.firstMatch(of: /posted (\d+) sightings/).flatMap { Int($0.1) }
        #expect((posted ?? 0) > 0, "\(gateway.outputText)")

        var request = HTTPClientRequest(url: base.absoluteString + "/metrics")
        request.headers.add(name: "Authorization", value: "Bearer \(ProximaProcess.adminToken)")
        let metrics = String(buffer: try await HTTPClient.shared.execute(request, timeout: .seconds(30)).body.collect(upTo: 1 << 20))
        let ingested = metrics.firstMatch(of: /proxima_sightings_ingested_total (\d+)/).flatMap { Int($0.1) }
        #expect(ingested == posted, "the server took \(ingested.map(String.init) ?? "none") of \(posted ?? 0) posted")
    }

    /// Whether the process has set SIGTERM's default action aside (`proxima` ignores it, and
    /// the dispatch source it reads it from catches it): its `SigIgn` and `SigCgt` masks in /proc.
    static func handlesTerminate(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        let bit = UInt64(1) << UInt64(SIGTERM - 1)
        return ["SigIgn:", "SigCgt:"].contains { name in
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
                  let mask = UInt64(line.dropFirst(name.count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
            return mask & bit != 0
        }
    }
}
