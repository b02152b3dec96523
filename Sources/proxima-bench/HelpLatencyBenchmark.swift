import AsyncHTTPClient
import BeaconServer
import Foundation
import NIOCore
import NIOFoundationCompat

/// How long after a help request's acknowledgement is stored the visitor's open event stream
/// (`GET /v1/help-requests/{id}/events`, Server-Sent Events) delivers it: issue 13's "within
/// 1 s" claim, measured over many requests on an in-process server on loopback, SQLite and
/// PostgreSQL. The end-to-end test prints the same figure for one request under whatever load
/// the test run has; this is the measurement the claim rests on.
enum HelpLatencyBenchmark {
    /// `PROXIMA_BENCH_HELP_REQUESTS` sets the requests per database (40).
    static var requests: Int { ProcessInfo.processInfo.environment["PROXIMA_BENCH_HELP_REQUESTS"].flatMap(Int.init) ?? 40 }

    static func run() async throws {
        try await BenchServer.eachDatabase(measure)
    }

    static func measure(name: String, location: DatabaseLocation) async throws {
        let bench = try await BenchServer.start(location)
        do {
            let lags = try await acknowledgementLags(bench)
            let sorted = lags.sorted()
            func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)] }
            print(String(format: "%@: %d acknowledgements, visitor's stream lag median %.1f ms, p95 %.1f ms, max %.1f ms",
                         name, lags.count, percentile(0.5) * 1000, percentile(0.95) * 1000, sorted[sorted.count - 1] * 1000))
        } catch {
            try await bench.stop()
            throw error
        }
        try await bench.stop()
    }

    /// For each request: the visitor's stream is open and idle, staff acknowledge over HTTP, and
    /// the lag is the stream's receipt of `acknowledged` minus the stored `acknowledgedAt`.
    static func acknowledgementLags(_ bench: BenchServer) async throws -> [Double] {
        let store = bench.store
        let organisation = try await store.createOrganisation(name: "Help bench", proximityUUIDs: [UUID()])
        let site = try await store.createSite(NewSite(organisationID: organisation.id, name: "Help desk", address: "", planWidth: 20, planHeight: 20))
        let visitor = try await store.registerDevice(NewDevice(siteID: site.id, name: "visitor", consent: DeviceConsent(events: true, positions: false)))
        let staff = try await store.issueToken(name: "help bench staff", role: .operator).token
        let base = bench.sightingsURL.replacingOccurrences(of: "/v1/sightings", with: "")
        var lags: [Double] = []
        for index in 0..<requests {
            let filed = try await store.fileHelpRequest(deviceID: visitor.device.id, NewHelpRequest(name: "visitor", minor: UInt16(index + 1)),
                                                        now: Date().timeIntervalSince1970)
            let stream = try await openStream(bench.client, url: "\(base)/v1/help-requests/\(filed.id)/events", token: visitor.token)
            // The stream is idle (waiting on the server's signal) before the acknowledgement.
            try await Task.sleep(for: .milliseconds(100))
            let acknowledgement = Task { try await post(bench.client, url: "\(base)/v1/help-requests/\(filed.id)/acknowledge", token: staff) }
            let receivedAt = try await stream.firstChange(kind: "acknowledged")
            let acknowledged = try await acknowledgement.value
            guard let storedAt = acknowledged.acknowledgedAt else {
                throw BenchmarkFailure(description: "help request \(filed.id) has no acknowledgedAt after its acknowledgement")
            }
            lags.append(receivedAt - storedAt)
            _ = try await store.finishHelpRequest(id: filed.id, as: .cancelled, now: Date().timeIntervalSince1970)
        }
        return lags
    }

    struct ChangeStream {
        var body: HTTPClientResponse.Body

        /// The wall-clock time the first change of `kind` arrived.
        func firstChange(kind: String) async throws -> Double {
            var pending: [UInt8] = []
            for try await buffer in body {
                pending.append(contentsOf: buffer.readableBytesView)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    if line == "event: \(kind)" { return Date().timeIntervalSince1970 }
                }
            }
            throw BenchmarkFailure(description: "the stream ended before a change of kind \(kind)")
        }
    }

    static func openStream(_ client: HTTPClient, url: String, token: String) async throws -> ChangeStream {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response = try await client.execute(request, timeout: .seconds(60))
        guard response.status == .ok else {
            throw BenchmarkFailure(description: "GET \(url) answered \(response.status)")
        }
        return ChangeStream(body: response.body)
    }

    static func post(_ client: HTTPClient, url: String, token: String) async throws -> HelpRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else {
            throw BenchmarkFailure(description: "POST \(url) answered \(response.status): \(String(buffer: body))")
        }
        return try JSONDecoder().decode(HelpRequest.self, from: Data(buffer: body))
    }
}
