import BeaconMQTT
import Testing

@Suite("MQTT outbox and backoff")
struct OutboxTests {
    func message(_ number: Int, _ qos: MQTTQoS) -> MQTTMessage { MQTTMessage(topic: "t", text: "\(number)", qos: qos) }

    @Test("QoS 1 messages stay in flight until acknowledged, within the window, and are resent with DUP in order")
    func inFlightWindow() throws {
        var outbox = MQTTOutbox(capacity: 10, inFlightLimit: 2)
        for number in 1...3 { #expect(outbox.enqueue(message(number, .atLeastOnce)) == .queued) }
        let first = try #require(outbox.nextToSend())
        let second = try #require(outbox.nextToSend())
        #expect(outbox.nextToSend() == nil, "the window of 2 is full")
        #expect(first.packetIdentifier != second.packetIdentifier)
        #expect(outbox.resends.map(\.message.text) == ["1", "2"])
        #expect(outbox.resends.allSatisfy { $0.duplicate })
        #expect(outbox.resends.map(\.packetIdentifier) == [first.packetIdentifier, second.packetIdentifier])
        #expect(outbox.acknowledge(try #require(first.packetIdentifier)))
        #expect(!outbox.acknowledge(try #require(first.packetIdentifier)), "a second PUBACK for the same id is ignored")
        let third = try #require(outbox.nextToSend())
        #expect(third.message.text == "3")
        #expect(!outbox.isIdle)
        outbox.acknowledge(try #require(second.packetIdentifier))
        outbox.acknowledge(try #require(third.packetIdentifier))
        #expect(outbox.isIdle)
    }

    @Test("QoS 0 messages leave at once and are never kept")
    func qosZero() throws {
        var outbox = MQTTOutbox(capacity: 4, inFlightLimit: 1)
        _ = outbox.enqueue(message(1, .atLeastOnce))
        _ = outbox.enqueue(message(2, .atMostOnce))
        #expect(try #require(outbox.nextToSend()).packetIdentifier != nil)
        let zero = try #require(outbox.nextToSend())
        #expect(zero.packetIdentifier == nil && zero.message.text == "2")
        #expect(outbox.resends.count == 1)
    }

    @Test("a full queue drops its oldest QoS 0 message, and refuses when only QoS 1 messages wait")
    func bounded() {
        var outbox = MQTTOutbox(capacity: 3, inFlightLimit: 1)
        _ = outbox.enqueue(message(1, .atLeastOnce))
        _ = outbox.enqueue(message(2, .atMostOnce))
        _ = outbox.enqueue(message(3, .atMostOnce))
        #expect(outbox.enqueue(message(4, .atLeastOnce)) == .queuedDropping(message(2, .atMostOnce)))
        #expect(outbox.enqueue(message(5, .atLeastOnce)) == .queuedDropping(message(3, .atMostOnce)))
        #expect(outbox.enqueue(message(6, .atMostOnce)) == .refused)
        #expect(outbox.waitingCount == 3)
    }

    @Test("packet identifiers wrap past 65535, skip 0 and any still in flight")
    func identifiers() throws {
        var outbox = MQTTOutbox(capacity: 100_000, inFlightLimit: 2)
        _ = outbox.enqueue(message(0, .atLeastOnce))
        let held = try #require(outbox.nextToSend()?.packetIdentifier)  // 1 stays in flight
        var seen: [UInt16] = []
        for number in 1...65_536 {
            _ = outbox.enqueue(message(number, .atLeastOnce))
            let id = try #require(outbox.nextToSend()?.packetIdentifier)
            seen.append(id)
            outbox.acknowledge(id)
        }
        #expect(!seen.contains(0))
        #expect(!seen.contains(held))
        #expect(seen.first == 2 && seen.contains(65_535))
    }

    @Test("backoff doubles to its maximum and starts over after a reset")
    func backoff() {
        var backoff = MQTTBackoff(initial: .milliseconds(100), maximum: .milliseconds(500))
        let delays = (0..<5).map { _ in backoff.nextDelay() }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(500), .milliseconds(500)])
        backoff.reset()
        #expect(backoff.nextDelay() == .milliseconds(100))
    }

    @Test("broker URLs: user, password, port, prefix and TLS; refusals name the part")
    func urls() throws {
        let url = try MQTTBrokerURL(parsing: "mqtt://user:p%40ss@broker.local:1884/site/north")
        #expect(url.host == "broker.local" && url.port == 1884 && url.username == "user" && url.password == "p@ss")
        #expect(url.prefix == "site/north" && !url.useTLS)
        #expect(!url.description.contains("p@ss"))
        let secure = try MQTTBrokerURL(parsing: "mqtts://h")
        #expect(secure.useTLS && secure.port == 8883 && secure.prefix == "proxima")
        for (text, part) in [("http://h/x", "scheme"), ("mqtt:///x", "host"), ("mqtt://h:0/x", "port"), ("mqtt://h/a/#", "path"),
                             ("mqtt://:pw@h/x", "user"), ("mqtt://h/x?y=1", "query")] {
            let error = #expect(throws: MQTTURLError.self) { try MQTTBrokerURL(parsing: text) }
            #expect(error?.part == part, "\(text)")
        }
    }
}
