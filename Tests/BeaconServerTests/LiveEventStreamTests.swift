@testable import BeaconGateway
import AsyncHTTPClient
import BeaconKit
@testable import BeaconServer
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The event streams over real connections to a real `proxima serve`: a WebSocket client reads
/// events as gateways make them, and an SSE client resumes with `Last-Event-ID` across a
/// server restart. (EventStreamTests covers the streams' contents and refusals in-process.)
@Suite("Live event streams", .serialized)
struct LiveEventStreamTests {
    /// Events made live reach a WebSocket client in order with their fields; the stored backlog
    /// comes first. When the server stops, the socket is closed and the client's run ends.
    @Test func webSocketDeliversEventsInOrderAndEndsWhenTheServerStops() async throws {
        let live = try await LiveServer.start(instance: "ws-live")
        defer { live.server.stop() }
        let reader = try await live.issueReader()
        let sent = 24
        for number in 0..<sent / 2 { try await live.post(number) }

        let inbox = Inbox()
        let url = "ws://\(live.base.host!):\(live.base.port!)/v1/events/ws"
        let client = Task {
            do {
                try await WebSocketClient.connect(url: url, configuration: .init(additionalHeaders: [.authorization: "Bearer \(reader)"]),
                                                  logger: Logger(label: "ws-test")) { inbound, _, _ in
                    await inbox.opened()
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        if case .text(let text) = message { await inbox.add(text) }
                    }
                }
                await inbox.ended(nil)
            } catch {
                await inbox.ended(error)
            }
        }
        #expect(try await Self.eventually { await inbox.open }, "the socket did not open")
        // The second half is made while the socket is open: live delivery, not only the backlog.
        for number in sent / 2..<sent { try await live.post(number) }
        let expected = LiveServer.expectedLines(batches: sent)
        #expect(expected.count >= 4, "the batches make events in both halves")
        let arrived = try await Self.eventually { await inbox.texts.count >= expected.count }
        let received = await inbox.texts.count
        #expect(arrived, "received \(received) of \(expected.count)")

        let events = try await inbox.texts.map { try JSONDecoder().decode(StoredEvent.self, from: Data($0.utf8)) }
        #expect(events.map(\.id) == Array(1...events.count), "ids in order, none missing or repeated")
        #expect(events.map(LiveServer.line) == expected)
        #expect(events.allSatisfy { $0.gatewayID == live.gatewayID })
        #expect(events.allSatisfy { event in
            event.event.map { event.label == BeaconIdentity(uuid: CrashDurabilityTests.uuid, major: 7, minor: $0.region.minor ?? 0).description } ?? false
        }, "an unregistered beacon is labelled with its identity: \(events.first?.label ?? "")")

        live.server.process.terminate()
        #expect(try await live.server.waitForExit(timeout: .seconds(60)) == 0, "serve should exit cleanly with a socket open")
        #expect(try await Self.eventually { await inbox.finished }, "the client's run did not end after the server stopped")
        let failure = await inbox.failure
        #expect(failure == nil, "the socket ended with an error, not a close: \(failure ?? "")")
        _ = await client.result
        let finalCount = await inbox.texts.count
        #expect(finalCount == expected.count, "nothing after the last event")
    }

    /// A never-issued token and a revoked one are refused at the upgrade with 401, through the
    /// WebSocket client (which sees a failed upgrade) and on the wire (which shows the status).
    @Test func invalidAndRevokedTokensAreRefused() async throws {
        let live = try await LiveServer.start(instance: "ws-refusals")
        defer { live.server.stop() }
        let admin = APIClient(base: live.base, token: ProximaProcess.adminToken)
        let issued = try await admin.send("POST", "/v1/tokens", TokenRequest(name: "kiosk", role: "read-only"), as: IssuedToken.self)
        let port = live.base.port!
        #expect(try await EventStreamTests.upgrade(port: port, path: "/v1/events/ws", token: issued.token).status == 101)
        _ = try await admin.send("DELETE", "/v1/tokens/\(issued.id)", nil as Empty?, as: IssuedTokenSummary.self)

        for token in [issued.token, "px_forged-token-that-was-never-issued"] {
            let answer = try await EventStreamTests.upgrade(port: port, path: "/v1/events/ws", token: token)
            #expect(answer.status == 401)
            #expect(answer.body.contains(#""field":"Authorization""#))
            await #expect(throws: WebSocketClientError.webSocketUpgradeFailed) {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/v1/events/ws",
                                                  configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]),
                                                  logger: Logger(label: "ws-test")) { _, _, _ in
                    Issue.record("a refused token opened the socket")
                }
            }
        }
    }

    /// Connections that end before their first request (a port probe, a client that gives up,
    /// garbage the guard refuses) are routine: the server logged each as an error
    /// ("Error handling upgrade result", Inappropriate operation for state) before.
    @Test func connectionsEndingBeforeARequestAreNotLoggedAsErrors() async throws {
        let live = try await LiveServer.start(instance: "ws-early-close")
        defer { live.server.stop() }
        let port = live.base.port!
        try await Self.connectAndClose(port: port)
        let garbage = try await EventStreamTests.request(port: port, "HELLO\r\n\r\n")
        #expect(garbage.status == 400)
        let reader = try await live.issueReader()
        #expect(try await EventStreamTests.upgrade(port: port, path: "/v1/events/ws", token: reader).status == 101)
        live.server.process.terminate()
        #expect(try await live.server.waitForExit(timeout: .seconds(60)) == 0)
        #expect(!live.server.outputText.contains("Error handling upgrade result"), "\(live.server.outputText.suffix(2000))")
        #expect(!live.server.outputText.contains("Inappropriate operation"), "\(live.server.outputText.suffix(2000))")
    }

    /// SSE resumes across a restart: a client reads part of the events, the server is killed
    /// (SIGKILL) and started again on the same SQLite file, more events are made, and the
    /// client reconnecting with `Last-Event-ID` gets every event exactly once.
    @Test func serverSentEventsResumeWithLastEventIDAcrossARestart() async throws {
        let first = try await LiveServer.start(instance: "sse-resume")
        defer { try? FileManager.default.removeItem(atPath: first.folder) }
        let sent = 24
        for number in 0..<sent / 2 { try await first.post(number) }
        let expected = LiveServer.expectedLines(batches: sent)
        let expectedFirstHalf = LiveServer.expectedLines(batches: sent / 2).count
        #expect(expectedFirstHalf >= 4 && expected.count > expectedFirstHalf + 2)

        // Read only some of what is stored, so the resumed stream must also bring stored,
        // unread events before the new ones.
        let before = try await Self.readServerSentEvents(base: first.base, lastEventID: nil, count: expectedFirstHalf / 2)
        #expect(before.count == expectedFirstHalf / 2)
        kill(first.server.process.processIdentifier, SIGKILL)
        first.server.process.waitUntilExit()

        let second = try await LiveServer.start(instance: "sse-resume", folder: first.folder, gateway: first.gatewayRegistration)
        defer { second.server.stop() }
        for number in sent / 2..<sent { try await second.post(number) }
        let lastID = try #require(Int(before.last?.id ?? ""))
        let after = try await Self.readServerSentEvents(base: second.base, lastEventID: lastID, count: expected.count - before.count)

        let all = before + after
        let ids: [String] = (1...expected.count).map { String($0) }
        #expect(all.map(\.id) == ids, "every event once, in order")
        let events = try all.map { try JSONDecoder().decode(StoredEvent.self, from: Data($0.data.utf8)) }
        #expect(events.map(LiveServer.line) == expected)
        #expect(zip(all, events).allSatisfy { $0.event == $1.kindName })
        // And the stored list agrees: nothing was made that the client did not get.
        let stored = try await CrashDurabilityTests.allEvents(APIClient(base: second.base, token: ProximaProcess.adminToken))
        #expect(stored.map(\.id) == events.map(\.id))
    }

    // MARK: Helpers

    struct TokenRequest: Encodable { var name: String; var role: String }
    struct IssuedTokenSummary: Decodable { var id: Int }

    /// What the WebSocket client has seen; the test polls it.
    actor Inbox {
        var texts: [String] = []
        var open = false
        var finished = false
        var failure: String?
        func opened() { open = true }
        func add(_ text: String) { texts.append(text) }
        func ended(_ error: (any Error)?) {
            finished = true
            failure = error.map { "\($0)" }
        }
    }

    /// Polls `condition` for up to 60 s (generous for a loaded CI host).
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            // Waits on the child `proxima serve`, whose events reach the test over a real socket.
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Opens a TCP connection and closes it without sending anything.
    static func connectAndClose(port: Int) async throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(socket >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        close(socket)
        // Let the server see the close before the next connection.
        // Waits on the child `proxima serve` seeing the close before the next connection.
        try await Task.sleep(for: .milliseconds(200))
    }

    /// Reads a following SSE stream until `count` events arrived (or 120 s passed).
    static func readServerSentEvents(base: URL, lastEventID: Int?, count: Int) async throws -> [EventStreamTests.ServerSentEvent] {
        var request = HTTPClientRequest(url: base.absoluteString + "/v1/events?follow=true")
        request.headers.add(name: "Authorization", value: "Bearer \(ProximaProcess.adminToken)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: String(lastEventID)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        #expect(response.status == .ok)
        var text = ""
        var events: [EventStreamTests.ServerSentEvent] = []
        for try await chunk in response.body {
            text += String(buffer: chunk)
            // Only whole events: a chunk may end inside one.
            guard let end = text.range(of: "\n\n", options: .backwards) else { continue }
            events = EventStreamTests.serverSentEvents(String(text[..<end.upperBound]))
            if events.count >= count { break }
        }
        return Array(events.prefix(count))
    }
}

/// A `proxima serve` on a SQLite file in a folder of its own, with one registered gateway that
/// posts CrashDurabilityTests' batches (three beacons heard in turn).
struct LiveServer {
    struct Registration: Sendable { var gatewayID: String; var token: String }

    let server: ProximaProcess
    let base: URL
    let folder: String
    let gatewayRegistration: Registration
    var gatewayID: String { gatewayRegistration.gatewayID }

    /// Gateway batches carry times of an hour ago; the server's sighting window must take them.
    static let start = (Date().timeIntervalSince1970 - 3_600).rounded(.down)

    static func start(instance: String, folder existing: String? = nil, gateway: Registration? = nil) async throws -> LiveServer {
        let folder = existing ?? NSTemporaryDirectory() + "proxima-\(instance)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(folder)/proxima.sqlite", instance: instance,
                                                            extra: ["--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"])
        if let gateway { return LiveServer(server: server, base: base, folder: folder, gatewayRegistration: gateway) }
        do {
            let registered = try await APIClient(base: base, token: ProximaProcess.adminToken)
                .send("POST", "/v1/gateways", CrashDurabilityTests.NewGateway(name: "door"), as: CrashDurabilityTests.Registered.self)
            return LiveServer(server: server, base: base, folder: folder,
                              gatewayRegistration: Registration(gatewayID: registered.gateway.id, token: registered.token))
        } catch {
            server.stop()
            throw error
        }
    }

    func issueReader() async throws -> String {
        try await APIClient(base: base, token: ProximaProcess.adminToken)
            .send("POST", "/v1/tokens", LiveEventStreamTests.TokenRequest(name: "reader", role: "read-only"), as: IssuedToken.self).token
    }

    func post(_ number: Int) async throws {
        let reply = try await APIClient(base: base, token: gatewayRegistration.token)
            .send("POST", "/v1/sightings", CrashDurabilityTests.batch(gateway: 0, number: number, start: Self.start), as: ProximaServer.IngestReply.self)
        #expect(!reply.duplicate && reply.accepted > 0, "batch \(number)")
    }

    /// The events one monitor makes from batches 0..<batches, as "kind minor time".
    static func expectedLines(batches: Int) -> [String] {
        var monitor = GatewayMonitor()
        var lines: [String] = []
        for number in 0..<batches {
            lines += monitor.apply(CrashDurabilityTests.batch(gateway: 0, number: number, start: start).sightings).changes
                .map { "\($0.transition) \($0.identity.minor) \($0.time)" }
        }
        return lines
    }

    static func line(_ event: StoredEvent) -> String { "\(event.kindName) \(event.event?.region.minor ?? 0) \(event.time)" }
}

/// The upgrade channel's log filter demotes only the routine "closed before a request" failure.
@Suite struct RoutineConnectionEndFilterTests {
    final class Captured: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [(Logger.Level, String)] = []
        func add(_ level: Logger.Level, _ message: String) { lock.withLock { events.append((level, message)) } }
        var all: [(Logger.Level, String)] { lock.withLock { events } }
    }

    struct CapturingHandler: LogHandler {
        let captured: Captured
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { captured.add(event.level, event.message.description) }
    }

    static func logger(level: Logger.Level, _ captured: Captured) -> Logger {
        var logger = Logger(label: "test") { _ in CapturingHandler(captured: captured, logLevel: level) }
        logger.handler = RoutineConnectionEndFilter(base: logger.handler)
        return logger
    }

    @Test func theRoutineEndIsDemotedAndOtherErrorsPass() {
        let captured = Captured()
        let logger = Self.logger(level: .debug, captured)
        logger.error("Error handling upgrade result", metadata: ["error.type": "Inappropriate operation for state"])
        logger.error("Error handling upgrade result", metadata: ["error.type": "Connection reset by peer"])
        logger.error("something else", metadata: ["error.type": "Inappropriate operation for state"])
        #expect(captured.all.map(\.0) == [.debug, .error, .error])
        #expect(captured.all.map(\.1) == ["connection closed before its first request", "Error handling upgrade result", "something else"])

        let quiet = Captured()
        Self.logger(level: .warning, quiet).error("Error handling upgrade result", metadata: ["error.type": "Inappropriate operation for state"])
        #expect(quiet.all.isEmpty, "a demoted message is dropped below the handler's level")
    }
}
