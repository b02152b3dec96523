import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Events out: one JSON form shared with the CLI, paged lists, the streams' one reading loop,
/// and the event socket's refusals.
@Suite("Event streams")
struct EventStreamTests {
    static let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("BeaconHCITests/Fixtures/btvirt-scan.btsnoop").path
    static let captureUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    /// `proxima monitor --json` and the server's SSE stream are read by the same Decodable.
    @Test func cliLineAndServerEventReadWithBeaconKitsDecoder() async throws {
        let cliLines = try await Self.monitorJSONLines()
        #expect(cliLines.count == 2)
        let cliEvents = try cliLines.map { try JSONDecoder().decode(BeaconEvent.self, from: Data($0.utf8)) }
        #expect(cliEvents.map(\.kindName) == ["enter", "exit"])
        for event in cliEvents {
            #expect(event.region.identifier == "\(Self.captureUUID.uuidString):1")
            #expect(event.region.uuid == Self.captureUUID)
            #expect(event.region.major == 1)
            #expect(event.region.minor == nil)
        }
        #expect(cliEvents[0].time < cliEvents[1].time)

        try await RouterHarness.with { harness, client in
            let body = try harness.batchBody([harness.sighting(1), harness.sighting(2), harness.sighting(70)], sequence: 0)
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: body) { _ in }
            try await client.execute(uri: "/v1/events?follow=false", method: .get, headers: harness.headers(.readOnly)) { response in
                let blocks = Self.serverSentEvents(response.text)
                #expect(blocks.map(\.id) == ["1", "2", "3"])
                #expect(blocks.map(\.event) == ["enter", "exit", "enter"])
                let data = try #require(blocks.first?.data)
                let event = try JSONDecoder().decode(BeaconEvent.self, from: Data(data.utf8))
                let identity = harness.office.mordor.identity
                guard case .didEnter(let region, let time) = event else {
                    Issue.record("expected an enter, found \(event)")
                    return
                }
                #expect(region.identifier == "\(identity.uuid.uuidString):\(identity.major):\(identity.minor)")
                #expect(region.uuid == identity.uuid && region.major == identity.major && region.minor == identity.minor)
                #expect(time == 1)
                let stored = try JSONDecoder().decode(StoredEvent.self, from: Data(data.utf8))
                #expect(stored.event == event)
                #expect(stored.id == 1)
                #expect(stored.gatewayID == harness.gatewayID)
                #expect(stored.siteID == harness.office.site.id)
                #expect(stored.label == "Bloomington Office – Conference Room: Mordor")
            }
        }
    }

    @Test func eventListPagesWithLimitAfterAndNextLink() async throws {
        try await RouterHarness.with { harness, client in
            try await Self.storeEvents(250, harness: harness)
            var headers = harness.headers(.readOnly)
            headers[.accept] = "application/json"
            try await client.execute(uri: "/v1/events", method: .get, headers: headers) { response in
                let ids = try response.json([StoredEvent].self).map(\.id)
                #expect(ids == Array(1...EventPage.defaultLimit))
                #expect(response.headers[.link] == "</v1/events?after=\(EventPage.defaultLimit)&limit=\(EventPage.defaultLimit)>; rel=\"next\"")
            }
            // Following `next` from a filtered page keeps the filter and ends without a link.
            let site = harness.office.site.id
            var path: String? = "/v1/events?site=\(site)&limit=60&after=10"
            var read: [Int] = []
            var pages: [Int] = []
            while let next = path {
                try await client.execute(uri: next, method: .get, headers: headers) { response in
                    #expect(response.status == .ok)
                    let page = try response.json([StoredEvent].self)
                    pages.append(page.count)
                    read += page.map(\.id)
                    path = response.headers[.link].flatMap(Self.nextTarget)
                }
            }
            #expect(read == Array(11...250))
            #expect(pages == [60, 60, 60, 60])
            try await client.execute(uri: "/v1/events?limit=\(EventPage.maximumLimit)", method: .get, headers: headers) { response in
                let events = try response.json([StoredEvent].self)
                #expect(events.count == 250)
                #expect(response.headers[.link] == nil)
            }
        }
    }

    @Test(arguments: ["0", "-3", "1001", "ten", "1e3"])
    func badLimitsAreRefusedNamingTheField(limit: String) async throws {
        try await RouterHarness.with { harness, client in
            try await client.execute(uri: "/v1/events?format=json&limit=\(limit)", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "limit")
                #expect(response.text.contains("1…\(EventPage.maximumLimit)"))
            }
        }
    }

    /// The stream reads through more stored events than one page holds, in order, once each.
    @Test func streamWithoutFollowReadsEveryPage() async throws {
        try await RouterHarness.with { harness, client in
            let count = EventPage.maximumLimit * 2 + 17
            try await Self.storeEvents(count, harness: harness)
            try await client.execute(uri: "/v1/events?follow=false&after=5", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(Self.serverSentEvents(response.text).map(\.id) == (6...count).map(String.init))
            }
        }
    }

    /// Refused upgrades of the event socket answer as every route does: 401 without a valid
    /// token (it answered 400 before), 403 for a role that may not read, 400 naming a bad field.
    @Test func webSocketRefusalsCarryTheAPIStatus() async throws {
        try await TestBackend.sqlite.withStore { store in
            let reader = try await store.issueToken(name: "reader", role: .readOnly).token
            let (_, gateway) = try await store.registerGateway(name: "door")
            let server = ProximaServer(store: store)
            let app = server.makeApplication(host: "127.0.0.1", port: 0)
            // The server's HTTP client must be shut down on every path, or its deinit traps.
            do {
                try await Self.checkRefusals(app: app, reader: reader, gatewayToken: gateway.token)
            } catch {
                await server.shutdown()
                throw error
            }
            await server.shutdown()
        }
    }

    static func checkRefusals(app: some ApplicationProtocol, reader: String, gatewayToken: String) async throws {
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let missing = try await Self.upgrade(port: port, path: "/v1/events/ws", token: nil)
            #expect(missing.status == 401)
            #expect(missing.headers["www-authenticate"] == "Bearer")
            #expect(missing.body.contains(#""field":"Authorization""#))
            #expect(try await Self.upgrade(port: port, path: "/v1/events/ws", token: "px_forged-token-that-was-never-issued").status == 401)
            let wrongRole = try await Self.upgrade(port: port, path: "/v1/events/ws", token: gatewayToken)
            #expect(wrongRole.status == 403)
            #expect(wrongRole.body.contains("'gateway'"))
            let badSite = try await Self.upgrade(port: port, path: "/v1/events/ws?site=lobby", token: reader)
            #expect(badSite.status == 400)
            #expect(badSite.body.contains(#""field":"site""#))
            #expect(try await Self.upgrade(port: port, path: "/v1/events/ws?access_token=\(reader)", token: nil).status == 101)
            #expect(try await Self.upgrade(port: port, path: "/v1/events/ws", token: reader).status == 101)
            // Plain requests on the same server still reach the router.
            #expect(try await Self.request(port: port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status == 200)
        }
    }

    // MARK: Helpers

    /// `proxima monitor --json` over the capture, with only the region given here.
    static func monitorJSONLines() async throws -> [String] {
        let monitor = try ProximaProcess(["monitor", "--replay", capture, "--speed", "0", "--json", "--no-stored-regions",
                                          "--region", "\(captureUUID.uuidString):1"])
        #expect(try await monitor.waitForExit(timeout: .seconds(60)) == 0)
        func lines() -> [String] { monitor.outputText.split(separator: "\n").map(String.init).filter { $0.hasPrefix("{") } }
        // The output pipe is read on its own thread; give it the moment to catch up with the exit.
        // Waits on the pipe from the child `proxima monitor`.
        for _ in 0..<100 where lines().count < 2 { try await Task.sleep(for: .milliseconds(50)) }
        return lines()
    }

    struct ServerSentEvent { var id = "", event = "", data = "" }

    static func serverSentEvents(_ text: String) -> [ServerSentEvent] {
        text.components(separatedBy: "\n\n").compactMap { block in
            var parsed = ServerSentEvent()
            for line in block.split(separator: "\n") {
                if line.hasPrefix("id: ") { parsed.id = String(line.dropFirst(4)) }
                if line.hasPrefix("event: ") { parsed.event = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") { parsed.data = String(line.dropFirst(6)) }
            }
            // An event has an id, but for the server's last (`event: end`); a comment has neither.
            return parsed.id.isEmpty && parsed.event.isEmpty ? nil : parsed
        }
    }

    /// `<target>; rel="next"` → target.
    static func nextTarget(_ link: String) -> String? {
        guard link.hasSuffix("; rel=\"next\""), link.hasPrefix("<"), let end = link.firstIndex(of: ">") else { return nil }
        return String(link[link.index(after: link.startIndex)..<end])
    }

    /// Stores enters of the office's beacon straight into the table, ids 1…count.
    static func storeEvents(_ count: Int, harness: RouterHarness) async throws {
        let identity = harness.office.mordor.identity, site = harness.office.site.id, gateway = harness.gatewayID
        try await harness.server.store.database.transaction { db in
            for index in 1...count {
                try await db.raw("""
                    INSERT INTO region_events (gateway_id, kind, uuid, major, minor, site_id, label, time, recorded_at)
                    VALUES (\(bind: gateway), 'enter', \(bind: identity.uuid.uuidString), \(bind: Int(identity.major)),
                            \(bind: Int(identity.minor)), \(bind: site), 'Mordor', \(bind: Double(index)), 0)
                    """).run()
            }
        }
    }

    struct RawResponse { var status: Int; var headers: [String: String]; var body: String }

    static func upgrade(port: Int, path: String, token: String?) async throws -> RawResponse {
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        head += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        return try await request(port: port, head + "\r\n")
    }

    struct RawFailure: Error, CustomStringConvertible { var description: String }

    /// One request over a plain socket, as a browser's WebSocket handshake is sent, on a thread
    /// of its own: its blocking reads must not hold one of the few cooperative threads the
    /// server under test needs to answer.
    static func request(port: Int, _ text: String) async throws -> RawResponse {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try blockingRequest(port: port, text) }) }.start()
        }
    }

    /// Reads the answer's head and its Content-Length body (a 101 has none), giving up after
    /// 60 s of silence.
    static func blockingRequest(port: Int, _ text: String) throws -> RawResponse {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawFailure(description: "socket: errno \(errno)") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RawFailure(description: "connect to port \(port): errno \(errno)") }
        let bytes = Array(text.utf8)
        guard send(socket, bytes, bytes.count, 0) == bytes.count else { throw RawFailure(description: "send: errno \(errno)") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func parsed() -> RawResponse? {
            let all = String(decoding: received, as: UTF8.self)
            guard let end = all.range(of: "\r\n\r\n") else { return nil }
            let lines = all[..<end.lowerBound].components(separatedBy: "\r\n")
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
            let body = String(all[end.upperBound...])
            guard body.utf8.count >= Int(headers["content-length"] ?? "0") ?? 0 else { return nil }
            return RawResponse(status: status, headers: headers, body: body)
        }
        while true {
            if let response = parsed() { return response }
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        guard let response = parsed() else {
            throw RawFailure(description: "no complete HTTP answer to '\(text.prefix(60))' in \(received.count) bytes")
        }
        return response
    }
}
