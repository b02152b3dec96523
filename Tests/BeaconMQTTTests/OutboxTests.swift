import BeaconMQTT
import Testing

@Suite("MQTT outbox and backoff")
struct OutboxTests {
    func message(_ number: Int, _ qos: MQTTQoS) -> MQTTMessage { MQTTMessage(topic: "t", text: "\(number)", qos: qos) }

    @Test("QoS 1 messages stay in flight until acknowledged, within the window, and are resent with DUP in order")
    func inFlightWindow() throws {
        var outbox = MQTTOutbox(capacity: 10, inFlightLimit: 2)
        var admissions: [MQTTOutbox.Admission] = []
        for number in 1...3 { admissions.append(outbox.enqueue(message(number, .atLeastOnce))) }
        #expect(admissions == [.queued, .queued, .queued])
        let sent_first = outbox.nextToSend()
        let first = try #require(sent_first?.packetIdentifier)
        let sent_second = outbox.nextToSend()
        let second = try #require(sent_second?.packetIdentifier)
        let blocked = outbox.nextToSend()
        #expect(blocked == nil, "the window of 2 is full")
        #expect(first != second)
        let resends = outbox.resends
        #expect(resends.map(\.message.text) == ["1", "2"])
        #expect(resends.allSatisfy { $0.duplicate })
        #expect(resends.map(\.packetIdentifier) == [first, second])
        let acknowledged = outbox.acknowledge(first)
        let again = outbox.acknowledge(first)
        #expect(acknowledged && !again, "a second PUBACK for the same id is ignored")
        let sent_third = outbox.nextToSend()
        let third = try #require(sent_third)
        #expect(third.message.text == "3")
        #expect(!outbox.isIdle)
        outbox.acknowledge(second)
        outbox.acknowledge(try #require(third.packetIdentifier))
        #expect(outbox.isIdle)
    }

    @Test("QoS 0 messages leave at once and are never kept")
    func qosZero() throws {
        var outbox = MQTTOutbox(capacity: 4, inFlightLimit: 1)
        _ = outbox.enqueue(message(1, .atLeastOnce))
        _ = outbox.enqueue(message(2, .atMostOnce))
        let sent_one = outbox.nextToSend()
        let one = try #require(sent_one)
        let sent_zero = outbox.nextToSend()
        let zero = try #require(sent_zero)
        #expect(one.packetIdentifier != nil)
        #expect(zero.packetIdentifier == nil && zero.message.text == "2")
        #expect(outbox.resends.count == 1)
    }

    @Test("a full queue drops its oldest QoS 0 message, and refuses when only QoS 1 messages wait")
    func bounded() {
        var outbox = MQTTOutbox(capacity: 3, inFlightLimit: 1)
        _ = outbox.enqueue(message(1, .atLeastOnce))
        _ = outbox.enqueue(message(2, .atMostOnce))
        _ = outbox.enqueue(message(3, .atMostOnce))
        let fourth = outbox.enqueue(message(4, .atLeastOnce))
        let fifth = outbox.enqueue(message(5, .atLeastOnce))
        let sixth = outbox.enqueue(message(6, .atMostOnce))
        #expect(fourth == .queuedDropping(message(2, .atMostOnce)))
        #expect(fifth == .queuedDropping(message(3, .atMostOnce)))
        #expect(sixth == .refused)
        #expect(outbox.waitingCount == 3)
    }

    @Test("a birth message goes ahead of the backlog, even when the queue is full of QoS 1 messages")
    func birthFirst() {
        var outbox = MQTTOutbox(capacity: 2, inFlightLimit: 5)
        _ = outbox.enqueue(message(1, .atLeastOnce))
        _ = outbox.enqueue(message(2, .atLeastOnce))
        #expect(outbox.enqueue(message(3, .atLeastOnce)) == .refused)
        outbox.enqueueFirst(message(0, .atLeastOnce))
        #expect(outbox.waitingCount == 3)
        #expect([outbox.nextToSend(), outbox.nextToSend(), outbox.nextToSend()].map { $0?.message.text } == ["0", "1", "2"])
    }

    @Test("packet identifiers wrap past 65535, skip 0 and any still in flight")
    func identifiers() throws {
        var outbox = MQTTOutbox(capacity: 100_000, inFlightLimit: 2)
        _ = outbox.enqueue(message(0, .atLeastOnce))
        let sent_held = outbox.nextToSend()
        let held = try #require(sent_held?.packetIdentifier)  // stays in flight
        var seen: [UInt16] = []
        for number in 1...65_536 {
            _ = outbox.enqueue(message(number, .atLeastOnce))
            guard let id = outbox.nextToSend()?.packetIdentifier else {
                Issue.record("no identifier for message \(number)")
                return
            }
            seen.append(id)
            outbox.acknowledge(id)
        }
        #expect(held == 1)
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
        let afterReset = backoff.nextDelay()
        #expect(afterReset == .milliseconds(100))
    }

    @Test("broker URLs: user, password, port, prefix and TLS; refusals name the part")
    func urls() throws {
        let url = try MQTTBrokerURL(parsing: "mqtt://user:p%40ss@broker.local:1884/site/north")
        #expect(url.host == "broker.local" && url.port == 1884 && url.username == "user" && url.password == "p@ss")
        #expect(url.prefix == "site/north" && !url.useTLS)
        #expect(!url.description.contains("p@ss"))
        let secure = try MQTTBrokerURL(parsing: "mqtts://h")
        #expect(secure.useTLS && secure.port == 8883 && secure.prefix == "proxima")
        for (text, part) in [("http://h/x", "scheme"), ("mqtt:///x", "host"), ("mqtt://h:0/x", "port"), ("mqtt://h/a/+", "path"),
                             ("mqtt://:pw@h/x", "user"), ("mqtt://h/x?y=1", "query")] {
            let error = #expect(throws: MQTTURLError.self) { try MQTTBrokerURL(parsing: text) }
            #expect(error?.part == part, "\(text)")
        }
    }
}
