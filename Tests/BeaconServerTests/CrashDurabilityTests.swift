@testable import BeaconGateway
import AsyncHTTPClient
import BeaconKit
@testable import BeaconServer
import BeaconTesting
import Foundation
import NIOCore
import NIOFoundationCompat
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Nothing acknowledged is lost: `proxima serve` is killed with SIGKILL at random moments while
/// gateways post, and restarted on the same database each time. Every batch is sent until it is
/// acknowledged (a retry of a batch the dead server had committed is answered as a duplicate);
/// at the end the events, ranging state and acknowledgements are exactly those of a reference
/// server that received each batch once and was never disturbed.
@Suite("Crash durability", .serialized)
struct CrashDurabilityTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let gateways = 3
    static let sightingsPerBatch = 40

    @Test func sqliteKilledFifteenTimesLosesAndDuplicatesNothing() async throws {
        let folder = NSTemporaryDirectory() + "proxima-crash-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try await Self.run(database: "sqlite:\(folder)/proxima.sqlite", reference: "sqlite:\(folder)/reference.sqlite", kills: 15)
        #expect(report.kills == 15)
        #expect(report.retriedBatches > 0, "some batch was cut off by a kill and sent again")
    }

    @Test(.enabled(if: PostgresServer.shouldRun))
    func postgresKilledFifteenTimesLosesAndDuplicatesNothing() async throws {
        let postgres = try PostgresServer.shared()
        let report = try await Self.run(database: try postgres.createDatabase(prefix: "crash"),
                                        reference: try postgres.createDatabase(prefix: "reference"), kills: 15)
        #expect(report.kills == 15)
        #expect(report.retriedBatches > 0)
    }

    /// PostgreSQL stopped as by a crash under a running server: the server says it is unhealthy,
    /// refuses with 503 and Retry-After naming the database, and serves again once PostgreSQL is
    /// back, without a restart of its own; a batch refused during the outage is taken once after it.
    @Test(.enabled(if: PostgresServer.shouldRun))
    func postgresOutageIsA503AndTheServerRecoversByItself() async throws {
        let postgres = try PostgresServer.dedicated()
        defer { postgres.remove() }
        let (server, base) = try await ProximaProcess.serve(database: try postgres.createDatabase(prefix: "outage"), instance: "outage",
                                                            extra: ["--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let gateway = try await admin.send("POST", "/v1/gateways", NewGateway(name: "door"), as: Registered.self)
        let client = APIClient(base: base, token: gateway.token)
        let start = (Date().timeIntervalSince1970 - 600).rounded(.down)
        _ = try await client.send("POST", "/v1/sightings", Self.batch(gateway: 0, number: 0, start: start), as: ProximaServer.IngestReply.self)
        #expect(try await Self.status(base, "/health") == 200)

        try postgres.stopImmediately()
        var health = 0
        for _ in 0..<60 where health != 503 {
            health = try await Self.status(base, "/health")
            // Waits on the child `proxima serve` noticing that the PostgreSQL server stopped.
            if health != 503 { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(health == 503, "/health during the outage")
        let refused = try await Self.post(base, token: gateway.token, Self.batch(gateway: 0, number: 1, start: start))
        #expect(refused.status == 503)
        #expect(refused.retryAfter == "\(APIError.retryAfterSeconds)")
        #expect(refused.body.contains("\"field\":\"database\""), "\(refused.body)")

        try postgres.start()
        for _ in 0..<120 where health != 200 {
            // Waits on the restarted PostgreSQL server and the child `proxima serve` reconnecting to it.
            try await Task.sleep(for: .milliseconds(250))
            health = try await Self.status(base, "/health")
        }
        #expect(health == 200, "/health after PostgreSQL came back")
        #expect(server.process.isRunning, "the server recovered without a restart")
        let retried = try await client.send("POST", "/v1/sightings", Self.batch(gateway: 0, number: 1, start: start), as: ProximaServer.IngestReply.self)
        #expect(!retried.duplicate && retried.accepted > 0, "the refused batch was not stored during the outage")
    }

    struct Answer { var status: Int; var retryAfter: String?; var body: String }

    static func status(_ base: URL, _ path: String) async throws -> Int {
        var request = HTTPClientRequest(url: base.absoluteString + path)
        request.method = .GET
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 16)
        return Int(response.status.code)
    }

    static func post(_ base: URL, token: String, _ batch: SightingBatch) async throws -> Answer {
        var request = HTTPClientRequest(url: base.absoluteString + "/v1/sightings")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(batch)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        return Answer(status: Int(response.status.code), retryAfter: response.headers.first(name: "Retry-After"), body: String(buffer: body))
    }

    struct Report {
        var kills = 0
        var acknowledged = 0
        var duplicates = 0
        var retriedBatches = 0
    }

    /// The serving process of the moment; a client asks for it before every attempt.
    actor Incarnation {
        var base: URL
        var process: ProximaProcess
        init(base: URL, process: ProximaProcess) { (self.base, self.process) = (base, process) }
        func replace(base: URL, process: ProximaProcess) { (self.base, self.process) = (base, process) }
    }

    actor Tally {
        var report = Report()
        var killerDone = false
        func acknowledged(duplicate: Bool, attempts: Int) {
            report.acknowledged += 1
            if duplicate { report.duplicates += 1 }
            if attempts > 1 { report.retriedBatches += 1 }
        }
        func killed() { report.kills += 1 }
        func finishKilling() { killerDone = true }
    }

    /// Gateway `gateway`'s batch `number`: three beacons heard in turn, one sighting in ten lost,
    /// 0.1 s apart, ending before the server's clock.
    static func batch(gateway: Int, number: Int, start: Double) -> SightingBatch {
        var generator = SeededRandom(seed: UInt64(gateway * 100_003 + number + 1))
        var sightings: [Sighting] = []
        for index in 0..<sightingsPerBatch {
            let step = number * sightingsPerBatch + index
            if generator.next() % 10 == 0 { continue }
            let minor = UInt16(1 + (step / 150) % 3)
            sightings.append(Sighting(time: start + Double(step) * 0.1, receiver: "gateway-\(gateway)",
                                      address: BluetoothAddress(rawValue: UInt64(minor)), rssi: Int8(-50 - Int(generator.next() % 30)),
                                      frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: 7, minor: minor)))))
        }
        return SightingBatch(sequence: number, sightings: sightings)
    }

    static func allEvents(_ client: APIClient) async throws -> [StoredEvent] {
        var events: [StoredEvent] = []
        while true {
            let page = try await client.get("/v1/events?after=\(events.last?.id ?? 0)&limit=\(EventPage.maximumLimit)&format=json", as: [StoredEvent].self)
            if page.isEmpty { return events }
            events += page
        }
    }

    struct NewGateway: Encodable { var name: String }
    struct Registered: Decodable { var gateway: Gateway; var token: String }

    static func run(database: String, reference referenceDatabase: String, kills: Int) async throws -> Report {
        let window = ["--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"]
        let (first, firstBase) = try await ProximaProcess.serve(database: database, instance: "crash", extra: window)
        let incarnation = Incarnation(base: firstBase, process: first)
        let (reference, referenceBase) = try await ProximaProcess.serve(database: referenceDatabase, instance: "reference", extra: window)
        defer { reference.stop() }

        var registered: [Registered] = []
        var referenceTokens: [String] = []
        for index in 0..<gateways {
            registered.append(try await APIClient(base: firstBase, token: ProximaProcess.adminToken)
                .send("POST", "/v1/gateways", NewGateway(name: "gateway-\(index)"), as: Registered.self))
            referenceTokens.append(try await APIClient(base: referenceBase, token: ProximaProcess.adminToken)
                .send("POST", "/v1/gateways", NewGateway(name: "gateway-\(index)"), as: Registered.self).token)
        }
        let start = (Date().timeIntervalSince1970 - 3_600).rounded(.down)
        let tally = Tally()
        var sent: [Int] = []

        try await withThrowingTaskGroup(of: (Int, Int)?.self) { group in
            group.addTask {
                var generator = SystemRandomNumberGenerator()
                for _ in 0..<kills {
                    // Each incarnation takes some batches first, then dies at a random moment
                    // while the gateways keep posting.
                    let before = await tally.report.acknowledged
                    let patience = ContinuousClock.now + .seconds(3)
                    while await tally.report.acknowledged < before + Self.gateways * 2, ContinuousClock.now < patience {
                        // Waits on the child `proxima serve` acknowledging the gateways' batches.
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    // A random moment in the child `proxima serve`'s work to kill it at (the point of the test, not a settle).
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...300, using: &generator)))
                    let victim = await incarnation.process
                    kill(victim.process.processIdentifier, SIGKILL)
                    victim.process.waitUntilExit()
                    await tally.killed()
                    let (next, base) = try await ProximaProcess.serve(database: database, instance: "crash", extra: window)
                    await incarnation.replace(base: base, process: next)
                }
                await tally.finishKilling()
                return nil
            }
            for index in 0..<gateways {
                let token = registered[index].token
                let referenceClient = APIClient(base: referenceBase, token: referenceTokens[index])
                group.addTask {
                    var number = 0
                    // Batches keep coming while the killer works, then a few more after the last restart.
                    var after = 0
                    while after < 5 {
                        if number >= 800 {
                            // The stream's hour is used up: wait for the last restart, then stop.
                            // Waits on the killer's last restart of the child `proxima serve`.
                            while await !tally.killerDone { try await Task.sleep(for: .milliseconds(50)) }
                            break
                        }
                        let batch = Self.batch(gateway: index, number: number, start: start)
                        var attempts = 0
                        while true {
                            attempts += 1
                            let client = APIClient(base: await incarnation.base, token: token)
                            do {
                                let reply = try await client.send("POST", "/v1/sightings", batch, as: ProximaServer.IngestReply.self)
                                await tally.acknowledged(duplicate: reply.duplicate, attempts: attempts)
                                break
                            } catch {
                                // The server died under the request, or is starting: the batch goes again.
                                // Waits on the child `proxima serve` restarting after its kill.
                                try await Task.sleep(for: .milliseconds(50))
                                if attempts > 2_000 { throw error }
                            }
                        }
                        _ = try await referenceClient.send("POST", "/v1/sightings", batch, as: ProximaServer.IngestReply.self)
                        number += 1
                        if await tally.killerDone { after += 1 }
                    }
                    return (index, number)
                }
            }
            var counts = [Int](repeating: 0, count: gateways)
            for try await finished in group { if let (index, count) = finished { counts[index] = count } }
            sent = counts
        }
        let last = await incarnation.process
        defer { last.stop() }
        let report = await tally.report
        print("crash durability on \(database.prefix(8)): \(report.kills) kills, \(report.acknowledged) batches acknowledged (\(sent.map(String.init).joined(separator: "/")) per gateway), \(report.retriedBatches) sent more than once, \(report.duplicates) answered as duplicates")
        #expect(report.acknowledged == sent.reduce(0, +), "every batch was acknowledged exactly once by the client's count")

        // Events: per gateway, the same kinds, regions and times, in order, as the reference's and
        // as one monitor fed the whole stream once.
        let crashed = try await Self.allEvents(APIClient(base: await incarnation.base, token: ProximaProcess.adminToken))
        let undisturbed = try await Self.allEvents(APIClient(base: referenceBase, token: ProximaProcess.adminToken))
        #expect(Set(crashed.map(\.id)).count == crashed.count)
        func line(_ event: StoredEvent) -> String { "\(event.kindName) \(event.event?.region.minor ?? 0) \(event.time)" }
        let referenceGateways = try await APIClient(base: referenceBase, token: ProximaProcess.adminToken).get("/v1/gateways", as: [Gateway].self)
        for index in 0..<gateways {
            var monitor = GatewayMonitor()
            var expected: [String] = []
            for number in 0..<sent[index] {
                expected += monitor.apply(Self.batch(gateway: index, number: number, start: start).sightings).changes
                    .map { "\($0.transition) \($0.identity.minor) \($0.time)" }
            }
            let got = crashed.filter { $0.gatewayID == registered[index].gateway.id && $0.fleet == nil }.map(line)
            let referenceID = referenceGateways.first { $0.name == "gateway-\(index)" }?.id
            let referenceLines = undisturbed.filter { $0.gatewayID == referenceID && $0.fleet == nil }.map(line)
            #expect(!expected.isEmpty)
            #expect(got == expected, "gateway \(index): \(got.count) events, \(expected.count) expected")
            #expect(got == referenceLines, "gateway \(index) against the reference server")
        }

        // Ranging: the latest state per gateway and beacon is the reference's.
        struct Ranged: Decodable, Equatable { var minor: Int; var rssi: Double; var proximity: String; var time: Double }
        for index in 0..<gateways {
            let referenceID = try #require(referenceGateways.first { $0.name == "gateway-\(index)" }?.id)
            let got = try await APIClient(base: await incarnation.base, token: ProximaProcess.adminToken)
                .get("/v1/ranging?gateway=\(registered[index].gateway.id)", as: [Ranged].self).sorted { $0.minor < $1.minor }
            let want = try await APIClient(base: referenceBase, token: ProximaProcess.adminToken)
                .get("/v1/ranging?gateway=\(referenceID)", as: [Ranged].self).sorted { $0.minor < $1.minor }
            #expect(got == want, "gateway \(index) ranging")
        }
        return report
    }
}
