import BeaconKit
import BeaconTesting
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 16 item 5: abuse is bounded and answered with the right status, and it does not take
/// the service from other clients. Functional only; the latency other gateways see under each
/// abuse is measured by `proxima-bench overload` (BENCHMARKS.md), not asserted here.
@Suite("Overload and abuse")
struct OverloadTests {
    /// A gateway posting ten times its rate is answered 429 with Retry-After for what is over
    /// its bucket, while a second gateway's batches are all taken.
    @Test func aGatewayOverItsRateIsRefusedWhileAnotherIsServed() async throws {
        // A slow refill (one batch in 20 s), so the count of refusals does not depend on how
        // long a loaded host takes to send the forty: 4 from the bucket, at most a few refilled.
        var configuration = ServerConfiguration()
        configuration.batchesPerSecond = 0.05
        configuration.batchBurst = 4
        try await RouterHarness.with(configuration: configuration) { harness, client in
            let (_, second) = try await harness.server.store.registerGateway(name: "till", siteID: harness.office.site.id)
            var secondHeaders = harness.headers(.gateway)
            secondHeaders[.authorization] = "Bearer \(second.token)"
            var statuses: [Int] = []
            var retryAfter: [String] = []
            var secondStatuses: [Int] = []
            // Forty batches at once from the first gateway (the bucket holds four); one from the
            // second gateway after every tenth, within its own bucket of four.
            for number in 0..<40 {
                let body = try harness.batchBody([harness.sighting(Double(number))], sequence: number)
                try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: body) { response in
                    statuses.append(response.status.code)
                    if response.status.code == 429 {
                        #expect(response.errorField == "rate")
                        retryAfter.append(response.headers[.retryAfter] ?? "")
                    }
                }
                if number % 10 == 9 {
                    let body = try harness.batchBody([harness.sighting(Double(number))], sequence: number / 10)
                    try await client.execute(uri: "/v1/sightings", method: .post, headers: secondHeaders, body: body) { response in
                        secondStatuses.append(response.status.code)
                    }
                }
            }
            let refused = statuses.filter { $0 == 429 }.count
            let onlyTakenOrRefused = statuses.allSatisfy { [202, 429].contains($0) }
            #expect(onlyTakenOrRefused, "\(Set(statuses))")
            #expect(refused >= 30, "40 batches against a bucket of 4: \(40 - refused) taken")
            #expect(retryAfter.allSatisfy { (Int($0) ?? 0) >= 1 }, "every 429 says when to retry: \(Set(retryAfter))")
            #expect(secondStatuses == [202, 202, 202, 202], "the other gateway's batches are all taken")
        }
    }

    /// One client opening a thousand event streams with one token gets the token's limit of
    /// them and 429 naming `streams` for the rest; another token's streams are bounded by the
    /// server's total (503); the event socket's upgrade is refused the same way; a closed stream
    /// gives its place back; and the server still answers everyone else.
    // Awaits a condition with no deadline of its own: the limit turns a hang into a failure.
    @Test(.timeLimit(.minutes(10))) func aThousandEventStreamsFromOneTokenAreBounded() async throws {
        var configuration = ServerConfiguration()
        configuration.maxEventStreamsPerToken = 8
        configuration.maxEventStreams = 12
        // The server sees a closed stream only when a write fails: an idle stream's keep-alive
        // every second (5 s by default) finds it within the test's minute even on a loaded machine.
        configuration.eventKeepAlive = .seconds(1)
        try await TestBackend.sqlite.withStore { store in
            let flooder = try await store.issueToken(name: "flooder", role: .readOnly).token
            let other = try await store.issueToken(name: "kiosk", role: .readOnly).token
            let server = ProximaServer(store: store, configuration: configuration)
            let app = server.makeApplication(host: "127.0.0.1", port: 0)
            do {
                try await app.test(.live) { client in
                    try await Self.checkStreamLimits(port: try #require(client.port), server: server, flooder: flooder, other: other)
                }
            } catch {
                await server.shutdown()
                throw error
            }
            await server.shutdown()
        }
    }

    /// Wrong tokens from one address are answered 401 until its burst is spent, then 429 with
    /// Retry-After naming Authorization, without a lookup; a token that worked from the address
    /// before keeps working throughout.
    @Test func wrongTokensAreThrottledPerAddressWhileAKnownTokenIsServed() async throws {
        var configuration = ServerConfiguration()
        configuration.wrongTokenBurst = 5
        configuration.wrongTokensPerMinute = 1
        try await RouterHarness.with(configuration: configuration) { harness, client in
            try await client.execute(uri: "/v1/sites", method: .get, headers: harness.headers(.readOnly)) { #expect($0.status == .ok) }
            var statuses: [HTTPResponse.Status] = []
            var fields: Set<String> = []
            var waits: Set<String> = []
            for guess in 0..<200 {
                var headers = harness.headers(nil)
                headers[.authorization] = "Bearer px_guess-\(guess)-\(UUID().uuidString)"
                try await client.execute(uri: "/v1/sites", method: .get, headers: headers) { response in
                    statuses.append(response.status)
                    if response.status == .tooManyRequests {
                        fields.insert(response.errorField ?? "")
                        waits.insert(response.headers[.retryAfter] ?? "")
                    }
                }
                if guess % 50 == 49 {
                    try await client.execute(uri: "/v1/sites", method: .get, headers: harness.headers(.readOnly)) { response in
                        #expect(response.status == .ok, "the reader's token during the flood")
                    }
                }
            }
            #expect(statuses.prefix(5).allSatisfy { $0 == .unauthorized })
            #expect(statuses.dropFirst(5).allSatisfy { $0 == .tooManyRequests }, "\(statuses.filter { $0 != .tooManyRequests }.count) not throttled")
            #expect(fields == ["Authorization"])
            #expect(waits.allSatisfy { (Int($0) ?? 0) >= 1 }, "\(waits)")
            #expect(harness.server.authThrottle.addressesHeld == 1)
        }
    }

    /// Another address is not touched by one's flood, and a flood from ever new addresses
    /// keeps the throttle's memory bounded.
    @Test func theThrottleIsPerAddressAndBounded() {
        let throttle = AuthFailureThrottle(burst: 3, perMinute: 1, maxAddresses: 100)
        for _ in 0..<10 { throttle.failed(address: "192.0.2.1") }
        #expect(throttle.wait(address: "192.0.2.1", token: "px_guess") != nil)
        #expect(throttle.wait(address: "192.0.2.2", token: "px_guess") == nil)
        for index in 0..<20_000 { throttle.failed(address: "10.\(index / 65_536).\(index / 256 % 256).\(index % 256)") }
        #expect(throttle.addressesHeld <= 100)
    }

    /// A throttled address may guess again once its allowance refilled, and not before.
    @Test func theThrottleRefillsWithTime() {
        let clock = TestClock()
        let throttle = AuthFailureThrottle(burst: 3, perMinute: 1, maxAddresses: 100, clock: clock)
        for _ in 0..<3 { throttle.failed(address: "192.0.2.1") }
        #expect(throttle.wait(address: "192.0.2.1", token: "px_guess") == 60)
        clock.advance(by: .seconds(30))
        #expect(throttle.wait(address: "192.0.2.1", token: "px_guess") == 30)
        clock.advance(by: .seconds(30))
        #expect(throttle.wait(address: "192.0.2.1", token: "px_guess") == nil)
        throttle.failed(address: "192.0.2.1")
        #expect(throttle.wait(address: "192.0.2.1", token: "px_guess") == 60, "one more wrong token empties the allowance again")
    }

    /// A gateway's bucket refills at its rate: a batch over the burst is told how long to wait,
    /// and is taken once that time has passed.
    @Test func theBatchBucketRefillsAtItsRate() async {
        let clock = TestClock()
        let limiter = RateLimiter(rate: 2, burst: 3, clock: clock)
        for _ in 0..<3 { #expect(await limiter.take("door") == nil) }
        #expect(await limiter.take("door") == 0.5)
        #expect(await limiter.take("till") == nil, "another gateway has its own bucket")
        clock.advance(by: .milliseconds(500))
        #expect(await limiter.take("door") == nil)
        #expect(await limiter.take("door") == 0.5)
        clock.advance(by: .seconds(60))
        for _ in 0..<3 { #expect(await limiter.take("door") == nil) }
        #expect(await limiter.take("door") == 0.5, "the bucket holds no more than its burst")
    }

    /// A rogue transmitter cycling through 10,000 random minors under one UUID, heard by one
    /// gateway: the gateway's engine keeps at most its beacon limit of them (in memory and in
    /// its checkpoint rows), every batch is still taken, and a second gateway is served.
    @Test func tenThousandRandomMinorsUnderOneUUIDKeepTheStateBounded() async throws {
        var configuration = ServerConfiguration()
        configuration.gatewayBeaconLimit = 500
        try await RouterHarness.with(configuration: configuration) { harness, client in
            let rogue = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!
            var generator = SystemRandomNumberGenerator()
            var statuses: [Int] = []
            for batch in 0..<20 {
                let sightings = (0..<500).map { index in
                    harness.sighting(Double(batch * 500 + index) * 0.09,
                                     identity: BeaconIdentity(uuid: rogue, major: 1, minor: UInt16.random(in: 0...UInt16.max, using: &generator)))
                }
                try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway),
                                         body: try harness.batchBody(sightings, sequence: batch)) { statuses.append(Int($0.status.code)) }
            }
            #expect(statuses == Array(repeating: 202, count: 20))
            let rows = try await harness.server.store.database.read { db in
                try await db.raw("SELECT COUNT(*) AS n FROM gateway_beacons WHERE gateway_id = \(bind: harness.gatewayID)").first()?
                    .decode(column: "n", as: Int.self) ?? -1
            }
            #expect(rows > 0 && rows <= 500, "\(rows) beacon rows kept for one gateway (limit 500)")

            let (_, second) = try await harness.server.store.registerGateway(name: "till", siteID: harness.office.site.id)
            var headers = harness.headers(.gateway)
            headers[.authorization] = "Bearer \(second.token)"
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers,
                                     body: try harness.batchBody([harness.sighting(1)], sequence: 0)) { response in
                #expect(response.status.code == 202)
            }
        }
    }

    /// A body trickled one byte a second (slowloris) is cut off by the request deadline: the
    /// server closes the connection before the body is complete, and serves others meanwhile.
    @Test func aBodyTrickledByteByByteIsCutOff() async throws {
        var configuration = ServerConfiguration()
        configuration.requestTimeout = .seconds(2)
        try await TestBackend.sqlite.withStore { store in
            let (_, gateway) = try await store.registerGateway(name: "door")
            let server = ProximaServer(store: store, configuration: configuration)
            let app = server.makeApplication(host: "127.0.0.1", port: 0)
            do {
                try await app.test(.live) { client in
                    let port = try #require(client.port)
                    let trickle = try await Self.trickle(port: port, token: gateway.token, contentLength: 1_000)
                    #expect(trickle.closedByServer, "the server kept the connection through \(trickle.bytesSent) body bytes")
                    #expect(trickle.bytesSent < 1_000)
                    #expect(try await EventStreamTests.request(port: port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status == 200)
                }
            } catch {
                await server.shutdown()
                throw error
            }
            await server.shutdown()
        }
    }

    struct Trickle { var bytesSent: Int; var closedByServer: Bool }

    /// Sends a sighting POST's head, then its body one byte a second until the server closes
    /// the connection or the body is complete; on a thread of its own (blocking sleeps).
    static func trickle(port: Int, token: String, contentLength: Int) async throws -> Trickle {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    let head = "POST /v1/sightings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                        + "Content-Type: application/json\r\nContent-Length: \(contentLength)\r\n\r\n"
                    let socket = try RawStream.connect(port: port)
                    defer { Glibc.close(socket) }
                    let bytes = Array(head.utf8)
                    guard send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
                        throw EventStreamTests.RawFailure(description: "send: errno \(errno)")
                    }
                    var sent = 0
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while sent < contentLength {
                        // Closed by the server: a read sees the end (or a reset), or a write fails.
                        let read = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                        if read == 0 || (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                            return Trickle(bytesSent: sent, closedByServer: true)
                        }
                        guard send(socket, [UInt8(ascii: " ")], 1, Int32(MSG_NOSIGNAL)) == 1 else {
                            return Trickle(bytesSent: sent, closedByServer: true)
                        }
                        sent += 1
                        Thread.sleep(forTimeInterval: 1)
                    }
                    return Trickle(bytesSent: sent, closedByServer: false)
                })
            }.start()
        }
    }

    static func checkStreamLimits(port: Int, server: ProximaServer, flooder: String, other: String) async throws {
        let opened = try await RawStream.openMany(port: port, path: "/v1/events?follow=true", token: flooder, count: 1_000)
        defer { opened.forEach { $0.close() } }
        let accepted = opened.filter { $0.status == 200 }
        let refused = opened.filter { $0.status == 429 }
        #expect(accepted.count == 8)
        #expect(refused.count == 992)
        let namedAndTimed = refused.filter { $0.head.contains(#""field":"streams""#) }.filter { $0.head.lowercased().contains("retry-after: ") }
        #expect(namedAndTimed.count == refused.count, "every refusal names streams and says when to retry")
        #expect(server.streams.openStreams == 8)

        let socket = try await EventStreamTests.upgrade(port: port, path: "/v1/events/ws", token: flooder)
        #expect(socket.status == 429)
        #expect(socket.body.contains(#""field":"streams""#))

        let others = try await RawStream.openMany(port: port, path: "/v1/events?follow=true", token: other, count: 5)
        defer { others.forEach { $0.close() } }
        #expect(others.map(\.status) == [200, 200, 200, 200, 503], "the server's total of 12 is reached at the fifth")
        #expect(others.last?.head.contains(#""field":"streams""#) == true)

        // Everything else is still served, and a JSON page is not a stream.
        #expect(try await EventStreamTests.request(port: port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status == 200)
        let page = try await EventStreamTests.request(port: port,
            "GET /v1/events?format=json HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(flooder)\r\nConnection: close\r\n\r\n")
        #expect(page.status == 200)

        // A stream the client closes gives its place back once the server sees it gone.
        accepted.forEach { $0.close() }
        await server.streams.waitUntilOpen(atMost: 4)
        #expect(server.streams.openStreams == 4, "the closed streams were not given back")
        let again = try await RawStream.openMany(port: port, path: "/v1/events?follow=true", token: flooder, count: 1)
        defer { again.forEach { $0.close() } }
        #expect(again.first?.status == 200)
    }
}

/// A raw HTTP request whose connection stays open after the answer's head, as an event
/// stream's client holds it.
final class RawStream: @unchecked Sendable {
    let socket: Int32
    let status: Int
    let head: String

    private init(socket: Int32, status: Int, head: String) {
        self.socket = socket
        self.status = status
        self.head = head
    }

    private let lock = NSLock()
    private var closed = false

    /// Closes once: a second close could hit a descriptor number the server in this process
    /// has been given since.
    func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            Glibc.shutdown(socket, Int32(SHUT_RDWR))
            Glibc.close(socket)
        }
    }

    /// Opens `count` streams one after another on a thread of its own (blocking reads must not
    /// hold a cooperative thread the server needs). A refused one is closed at once.
    static func openMany(port: Int, path: String, token: String, count: Int) async throws -> [RawStream] {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try (0..<count).map { _ in try open(port: port, path: path, token: token) } })
            }.start()
        }
    }

    /// A loopback TCP connection whose reads give up after 60 s of silence.
    static func connect(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw EventStreamTests.RawFailure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(socket)
            throw EventStreamTests.RawFailure(description: "connect to port \(port): errno \(errno)")
        }
        return socket
    }

    /// Connects, sends the GET, and reads until the head has arrived (and, for a refusal, its
    /// small body), giving up after 60 s of silence.
    static func open(port: Int, path: String, token: String) throws -> RawStream {
        let socket = try connect(port: port)
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nAccept: text/event-stream\r\n\r\n".utf8)
        guard send(socket, request, request.count, 0) == request.count else {
            Glibc.close(socket)
            throw EventStreamTests.RawFailure(description: "send: errno \(errno)")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
                let length = text[..<end.lowerBound].split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                if status == 200 || text.utf8.count - text[..<end.upperBound].utf8.count >= (length ?? 0) {
                    let stream = RawStream(socket: socket, status: status, head: text)
                    if status != 200 { stream.close() }
                    return stream
                }
            }
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else {
                Glibc.close(socket)
                throw EventStreamTests.RawFailure(description: "no complete answer to GET \(path) in \(received.count) bytes")
            }
            received += buffer[0..<count]
        }
    }
}
