import BeaconMQTT
import BeaconTesting
import Foundation
import Testing

/// The client against a real mosquitto broker on loopback (started by the test; on CI a missing
/// broker fails these tests).
@Suite("MQTT client with mosquitto", .serialized, .enabled(if: MosquittoBroker.shouldRun))
struct BrokerClientTests {
    func client(_ broker: MosquittoBroker, id: String, cleanSession: Bool = true, keepAlive: UInt16 = 30) -> MQTTClient {
        var configuration = MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: broker.port), clientIdentifier: id)
        configuration.cleanSession = cleanSession
        configuration.keepAlive = keepAlive
        configuration.backoff = MQTTBackoff(initial: .milliseconds(50), maximum: .milliseconds(500))
        return MQTTClient(configuration: configuration)
    }

    @Test("publish QoS 0 and 1 and a retained message; a later subscriber gets the retained one")
    func publishSubscribe() async throws {
        let broker = try MosquittoBroker()
        let subscriber = client(broker, id: "sub")
        let publisher = client(broker, id: "pub")
        await subscriber.start()
        await publisher.start()
        #expect(try await subscriber.subscribe([("t/#", .atLeastOnce)], timeout: .seconds(60)) == [1])
        try await publisher.publish(MQTTMessage(topic: "t/zero", text: "0"))
        try await publisher.publish(MQTTMessage(topic: "t/one", text: "1", qos: .atLeastOnce))
        try await publisher.publish(MQTTMessage(topic: "t/kept", text: "kept", qos: .atLeastOnce, retain: true))
        #expect(await publisher.flush(timeout: .seconds(10)))
        let received = try await collect(subscriber.messages, count: 3)
        #expect(Set(received.map(\.text)) == ["0", "1", "kept"])

        let late = client(broker, id: "late")
        await late.start()
        try await late.subscribe([("t/kept", .atMostOnce)], timeout: .seconds(60))
        let retained = try await collect(late.messages, count: 1)
        #expect(retained.first?.text == "kept" && retained.first?.retain == true)
        await late.disconnect()
        await subscriber.disconnect()
        await publisher.disconnect()
    }

    @Test("keep-alive pings hold a connection open past 1.5 keep-alive periods")
    func keepAlive() async throws {
        let broker = try MosquittoBroker()
        // Ten seconds: pings go every 5 s from the channel's event loop, so they keep time even
        // when the test host's cooperative threads are busy.
        let pinging = client(broker, id: "pinging", keepAlive: 10)
        await pinging.start()
        // Counted from the first connection: on a starved host connecting itself may take a
        // retry, which says nothing about keep-alive.
        #expect(await pinging.waitUntilConnected(timeout: .seconds(60)))
        let connected = await pinging.statistics
        // Real time on purpose: mosquitto (a real broker process) must see keep-alive pings for longer than its 1.5 × keep-alive timeout.
        try await Task.sleep(for: .seconds(17))
        #expect(await pinging.isConnected)
        // The answers reach the client's actor as events; on a starved host they may be counted
        // a little after the 17 s, so the count is awaited (the connection count is not).
        var statistics = await pinging.statistics
        let deadline = ContinuousClock.now + .seconds(30)
        while statistics.pingsAnswered - connected.pingsAnswered < 2 && ContinuousClock.now < deadline {
            // Waits on mosquitto (a real broker process) answering pings.
            try await Task.sleep(for: .milliseconds(100))
            statistics = await pinging.statistics
        }
        #expect(statistics.connections == connected.connections, "the broker would have closed a silent connection after 15 s")
        #expect(statistics.pingsAnswered - connected.pingsAnswered >= 2, "\(statistics)")
        await pinging.disconnect()
    }

    @Test("mqtts: a client that trusts the broker's CA publishes and subscribes; one that does not never connects")
    func tlsBroker() async throws {
        let certificates = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-mqtt-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: certificates, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: certificates) }
        func openssl(_ arguments: [String]) throws {
            let (status, output) = try TestPassCertificates.tool("/usr/bin/openssl", arguments, in: certificates)
            try #require(status == 0, "openssl \(arguments.joined(separator: " ")): \(output)")
        }
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
                     "-out", "ca.pem", "-days", "2", "-subj", "/CN=Proxima MQTT test CA"])
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "broker.key",
                     "-out", "broker.csr", "-subj", "/CN=127.0.0.1"])
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".write(to: certificates.appendingPathComponent("ext.cnf"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "broker.pem",
                     "-days", "2", "-extfile", "ext.cnf"])
        let broker = try MosquittoBroker(tls: .init(certificate: certificates.appendingPathComponent("broker.pem").path,
                                                    key: certificates.appendingPathComponent("broker.key").path))
        let url = try MQTTBrokerURL(parsing: "mqtts://127.0.0.1:\(broker.port)/secure")
        #expect(url.useTLS)

        var trusting = MQTTClient.Configuration(broker: url, clientIdentifier: "tls-trusting")
        trusting.trustedCertificatesFile = certificates.appendingPathComponent("ca.pem").path
        let client = MQTTClient(configuration: trusting)
        await client.start()
        #expect(try await client.subscribe([("secure/#", .atLeastOnce)], timeout: .seconds(60)) == [1])
        try await client.publish(MQTTMessage(topic: "secure/hello", text: "over TLS", qos: .atLeastOnce))
        let received = try await collect(client.messages, count: 1)
        #expect(received.first?.text == "over TLS")

        let reports = MessageTexts()
        var untrusting = MQTTClient.Configuration(broker: url, clientIdentifier: "tls-untrusting")
        untrusting.backoff = MQTTBackoff(initial: .milliseconds(100), maximum: .milliseconds(500))
        let stranger = MQTTClient(configuration: untrusting) { reports.append($0) }
        await stranger.start()
        func refusedForItsCertificate() -> Bool { reports.all.contains { $0.lowercased().contains("certificate") || $0.lowercased().contains("verif") } }
        let deadline = ContinuousClock.now + .seconds(60)
        // Waits on mosquitto (a real broker process) refusing the TLS handshake.
        while !refusedForItsCertificate() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(refusedForItsCertificate(), "\(reports.all)")
        #expect(await !stranger.isConnected, "a broker whose CA is not trusted was accepted")
        #expect(await stranger.statistics.connections == 0)
        await stranger.disconnect()
        await client.disconnect()
    }

    @Test("no QoS 1 message is lost while the broker restarts mid-stream")
    func brokerRestart() async throws {
        let broker = try MosquittoBroker(persistence: true)
        // A persistent session (clean session off) keeps the subscription and the messages
        // queued for it while the subscriber is away.
        let subscriber = client(broker, id: "restart-sub", cleanSession: false)
        let publisher = client(broker, id: "restart-pub")
        await subscriber.start()
        await publisher.start()
        try await subscriber.subscribe([("seq", .atLeastOnce)], timeout: .seconds(60))
        let total = 300
        let received = Task { try await collectNumbers(subscriber.messages, until: total) }
        for number in 1...total {
            try await publisher.publish(MQTTMessage(topic: "seq", text: "\(number)", qos: .atLeastOnce))
            if number == total / 2 {
                // Lets mosquitto (a real broker process) receive what was sent before it is restarted.
                try await Task.sleep(for: .milliseconds(50))
                try broker.restart()
            }
            // Paces the publisher against mosquitto (a real broker process) across its restart.
            if number % 10 == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(await publisher.flush(timeout: .seconds(20)))
        let numbers = try await received.value
        #expect(numbers == Set(1...total), "missing: \(Set(1...total).subtracting(numbers).sorted().prefix(20))")
        #expect(await publisher.statistics.connections >= 2)
        #expect(await subscriber.statistics.connections >= 2)
        await subscriber.disconnect()
        await publisher.disconnect()
    }
    @Test("a client that disconnects while the broker is away sends what it queued once the broker is back")
    func disconnectWaitsForTheReconnect() async throws {
        let broker = try MosquittoBroker()
        let publisher = client(broker, id: "goodbye-pub")
        await publisher.start()
        #expect(await publisher.waitUntilConnected(timeout: .seconds(30)))
        broker.kill()
        let deadline = ContinuousClock.now + .seconds(30)
        while await publisher.isConnected, ContinuousClock.now < deadline {
            // Waits for the client to see mosquitto (a real broker process) gone.
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await !publisher.isConnected)
        try await publisher.publish(MQTTMessage(topic: "gateway/status", text: "offline", qos: .atLeastOnce, retain: true))
        let goodbye = Task { await publisher.disconnect(flushTimeout: .seconds(30)) }
        try broker.start()
        await goodbye.value
        #expect(await publisher.statistics.connections >= 2, "the message went out on the first connection, so this proves nothing")

        let late = client(broker, id: "goodbye-late")
        await late.start()
        try await late.subscribe([("gateway/status", .atLeastOnce)], timeout: .seconds(30))
        let retained = try await collect(late.messages, count: 1)
        #expect(retained.map(\.text) == ["offline"])
        await late.disconnect()
    }
}

/// The first `count` messages, or an error after 20 s.
func collect(_ messages: AsyncStream<MQTTMessage>, count: Int) async throws -> [MQTTMessage] {
    try await withTimeout(.seconds(20)) {
        var result: [MQTTMessage] = []
        for await message in messages {
            result.append(message)
            if result.count == count { break }
        }
        return result
    }
}

/// Distinct numbers received (duplicates from resends count once), until `total` are in or 30 s pass.
func collectNumbers(_ messages: AsyncStream<MQTTMessage>, until total: Int) async throws -> Set<Int> {
    let seen = NumberSet()
    do {
        try await withTimeout(.seconds(30)) {
            for await message in messages {
                if let number = Int(message.text) { seen.insert(number) }
                if seen.count == total { return }
            }
        }
    } catch is TimedOut {}
    return seen.values
}

final class MessageTexts: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String] = []
    func append(_ text: String) { lock.withLock { texts.append(text) } }
    var all: [String] { lock.withLock { texts } }
}

final class NumberSet: @unchecked Sendable {
    private let lock = NSLock()
    private var set: Set<Int> = []
    func insert(_ value: Int) { lock.withLock { _ = set.insert(value) } }
    var count: Int { lock.withLock { set.count } }
    var values: Set<Int> { lock.withLock { set } }
}

struct TimedOut: Error {}

func withTimeout<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            // A hang guard around a real broker process (mosquitto): the limit, not a settle wait.
            try await Task.sleep(for: limit)
            throw TimedOut()
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}
