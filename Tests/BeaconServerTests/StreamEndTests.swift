import AsyncHTTPClient
import BeaconTesting
@testable import BeaconServer
import Foundation
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOCore
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A token that is revoked or expires ends its open streams (SSE and the event socket) with the
/// reason, over real connections. The server's interval clock is a TestClock: a revoked
/// token's streams end with that clock never moved (no poll has to come round), and an expired
/// one's within 1 s of it (the streams' poll is 250 ms).
@Suite("Streams end with their token", .serialized)
struct StreamEndTests {
    final class ServerTime: Sendable {
        let now: Mutex<Double>
        init(_ start: Double) { now = Mutex(start) }
        func set(_ time: Double) { now.withLock { $0 = time } }
    }

    /// What one client saw of its stream when it ended.
    struct Ending: Sendable {
        var events: [EventStreamTests.ServerSentEvent] = []
        var closeCode: String?
        var closeReason: String?
    }

    struct Setup {
        let server: ProximaServer
        let store: Store
        let clock: TestClock
        let time: ServerTime
        let port: Int
    }

    static func withServer(_ body: @Sendable (Setup) async throws -> Void) async throws {
        try await TestBackend.sqlite.withStore { store in
            let clock = TestClock()
            let time = ServerTime(Date().timeIntervalSince1970)
            let server = ProximaServer(store: store, intervalClock: clock, clock: { time.now.withLock { $0 } })
            let app = server.makeApplication(host: "127.0.0.1", port: 0)
            try await app.test(.live) { client in
                try await body(Setup(server: server, store: store, clock: clock, time: time, port: try #require(client.port)))
            }
            await server.shutdown()
        }
    }

    /// Follows `/v1/events` until the server ends it; returns every event block, the last one
    /// the `end` event when the server said why.
    static func serverSentEvents(port: Int, token: String) async throws -> Ending {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/events?follow=true")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        #expect(response.status == .ok)
        var text = ""
        for try await chunk in response.body { text += String(buffer: chunk) }
        return Ending(events: EventStreamTests.serverSentEvents(text))
    }

    /// Opens the event socket and reads until the server closes it; returns its close frame.
    static func socket(port: Int, token: String) async throws -> Ending {
        let frame = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/v1/events/ws",
                                                      configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]),
                                                      logger: Logger(label: "stream-end-test")) { inbound, _, _ in
            for try await _ in inbound.messages(maxSize: 1 << 20) {}
        }
        return Ending(closeCode: frame.map { "\($0.closeCode)" }, closeReason: frame?.reason)
    }

    /// Both kinds of stream for `token`, running until the server ends them.
    static func openBoth(_ setup: Setup, token: String, alreadyOpen: Int = 0) async throws -> (sse: Task<Ending, any Error>, socket: Task<Ending, any Error>) {
        let port = setup.port
        let sse = Task { try await serverSentEvents(port: port, token: token) }
        let socket = Task { try await Self.socket(port: port, token: token) }
        await setup.server.streams.waitUntilOpen(atLeast: alreadyOpen + 2)
        return (sse, socket)
    }

    static func expectEnded(_ streams: (sse: Task<Ending, any Error>, socket: Task<Ending, any Error>), saying reason: String) async throws {
        let sse = try await streams.sse.value
        let last = try #require(sse.events.last, "the SSE stream ended without an event")
        #expect(last.event == "end")
        #expect(last.data == #"{"reason":"\#(reason)"}"#)
        let socket = try await streams.socket.value
        #expect(socket.closeCode == "policyViolation")
        #expect(socket.closeReason == reason)
    }

    @Test(.timeLimit(.minutes(2)))
    func revokingATokenEndsItsStreamsAtOnce() async throws {
        try await Self.withServer { setup in
            let admin = try await setup.store.issueToken(name: "admin", role: .admin)
            let reader = try await setup.store.issueToken(name: "wall screen", role: .readOnly)
            let other = try await setup.store.issueToken(name: "kiosk", role: .readOnly)
            let readerStreams = try await Self.openBoth(setup, token: reader.token)
            let otherStreams = try await Self.openBoth(setup, token: other.token, alreadyOpen: 2)

            var request = HTTPClientRequest(url: "http://127.0.0.1:\(setup.port)/v1/tokens/\(reader.id)")
            request.method = .DELETE
            request.headers.add(name: "Authorization", value: "Bearer \(admin.token)")
            #expect(try await HTTPClient.shared.execute(request, timeout: .seconds(60)).status == .ok)

            try await Self.expectEnded(readerStreams, saying: StreamEnd.revoked)
            await setup.server.streams.waitUntilOpen(atMost: 2)
            #expect(setup.clock.now.offset == .zero, "the streams ended on the revocation, not on a poll")
            // The other token's streams go on, until it is revoked too (the interval clock never
            // moves, so nothing else would end them: not even the server's shutdown).
            #expect(setup.server.streams.openStreams == 2)
            await setup.server.endStreams(ofToken: other.id, reason: StreamEnd.revoked)
            try await Self.expectEnded(otherStreams, saying: StreamEnd.revoked)
        }
    }

    /// A token revoked by another instance (the same database, not this server's route) ends
    /// its streams at this instance's next sweep of open streams (once a second in `serve`).
    @Test(.timeLimit(.minutes(2)))
    func aTokenRevokedElsewhereEndsItsStreamsAtTheNextSweep() async throws {
        try await Self.withServer { setup in
            _ = try await setup.store.issueToken(name: "admin", role: .admin)
            let reader = try await setup.store.issueToken(name: "wall screen", role: .readOnly)
            let streams = try await Self.openBoth(setup, token: reader.token)
            await setup.server.endStreamsThatMustEnd()
            #expect(setup.server.streams.openStreams == 2, "a sweep leaves a working token's streams open")
            _ = try await setup.store.revokeToken(id: reader.id)
            await setup.server.endStreamsThatMustEnd()
            try await Self.expectEnded(streams, saying: StreamEnd.revoked)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func anExpiredTokensStreamsEndWithinOneSecond() async throws {
        try await Self.withServer { setup in
            let start = setup.time.now.withLock { $0 }
            let reader = try await setup.store.issueToken(name: "visitor screen", role: .readOnly, expiresAt: start + 3_600)
            let streams = try await Self.openBoth(setup, token: reader.token)
            // Both streams wait on the ring with a poll's timeout.
            await setup.clock.waitForSleepers(2)
            setup.time.set(start + 3_600)
            // One poll (250 ms of the interval clock): the streams look at their token when
            // their wait times out, and end; a stream that did not would hold the test to its limit.
            setup.clock.advance(by: .milliseconds(250))
            try await Self.expectEnded(streams, saying: StreamEnd.expired)
        }
    }

    /// A client that asks for every event and reads none is closed once a write has waited on
    /// it for `slowReaderTimeout` (server clock), and counted; a reading client is not.
    @Test(.timeLimit(.minutes(2)))
    func aClientThatReadsNothingIsClosed() async throws {
        try await Self.withServer { setup in
            let reader = try await setup.store.issueToken(name: "stalled screen", role: .readOnly)
            try await Self.storeEvents(20_000, store: setup.store)
            let socket = try Self.openUnreadStream(port: setup.port, token: reader.token)
            defer { close(socket) }
            await setup.server.streams.waitUntilOpen(atLeast: 1)
            let timeout = setup.server.configuration.slowReaderTimeout.seconds
            var closed = false
            for _ in 0..<600 where !closed {
                setup.time.now.withLock { $0 += timeout + 1 }
                await setup.server.endStreamsThatMustEnd()
                closed = setup.server.streams.openStreams == 0
                // Waits on the server's writes to the real socket filling its buffers.
                if !closed { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(closed, "the stream of a client that reads nothing was not closed")
            let metrics = setup.server.metrics.exposition()
            #expect(metrics.contains("proxima_event_streams_slow_closed_total 1"), "\(metrics.split(separator: "\n").filter { $0.contains("slow") })")
        }
    }

    /// Enters straight into the table, ids 1…count, in one statement.
    static func storeEvents(_ count: Int, store: Store) async throws {
        try await store.database.transaction { db in
            try await db.raw("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(unsafeRaw: String(count)))
                INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at)
                SELECT 'door', 'enter', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, i % 100, NULL, 'a label long enough to fill buffers', i, 0 FROM n
                """).run()
        }
    }

    /// Sends a following SSE request on a socket with a small receive buffer and returns it
    /// unread.
    static func openUnreadStream(port: Int, token: String) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw EventStreamTests.RawFailure(description: "socket: errno \(errno)") }
        var size: Int32 = 4096
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw EventStreamTests.RawFailure(description: "connect: errno \(errno)")
        }
        let request = Array("GET /v1/events?follow=true HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8)
        guard send(socket, request, request.count, 0) == request.count else {
            close(socket)
            throw EventStreamTests.RawFailure(description: "send: errno \(errno)")
        }
        return socket
    }
}
