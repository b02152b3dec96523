import BeaconMQTT
import BeaconTesting
import Foundation
import Testing

/// `proxima serve --demo --mqtt …` against a real mosquitto: the demo's built-in simulated
/// gateway makes region events, which the server stores and publishes; a clean stop says
/// `offline` itself, a SIGKILL leaves it to the broker's will.
@Suite("proxima serve --mqtt with mosquitto", .serialized, .enabled(if: MosquittoBroker.shouldRun))
struct ServeMQTTTests {
    @Test("stored enter events and region states, online, offline on SIGTERM, and the will after SIGKILL")
    func serverToBroker() async throws {
        let broker = try MosquittoBroker()
        let watcher = MQTTClient(configuration: MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: broker.port),
                                                                         clientIdentifier: "serve-watcher"))
        await watcher.start()
        try await watcher.subscribe([("venue/#", .atLeastOnce)], timeout: .seconds(60))
        let seen = MessageLog()
        let reader = Task { for await message in watcher.messages { seen.append(message) } }
        defer { reader.cancel() }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-serve-mqtt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func serve() throws -> ChildProcess {
            try ChildProcess.proxima(["serve", "--demo", "--port", "0", "--database", "sqlite:\(directory.path)/proxima.sqlite",
                                      "--instance", "desk", "--mqtt", "mqtt://127.0.0.1:\(broker.port)/venue"],
                                     environment: ["PROXIMA_CONFIG_DIR": directory.path])
        }
        let status = "venue/server/desk/status"

        let first = try serve()
        #expect(try await seen.first(timeout: .seconds(60)) { $0.topic == status && $0.text == "online" } != nil, "\(first.standardError)")
        let enter = try #require(try await seen.first(timeout: .seconds(60)) { $0.topic == "venue/server/events" && $0.text.contains("\"enter\"") },
                                 "no stored enter event was published; the server said: \(first.standardError.suffix(2000))")
        let event = try #require(try JSONSerialization.jsonObject(with: Data(enter.payload)) as? [String: Any])
        let gatewayID = try #require(event["gatewayID"] as? String)
        #expect(event["id"] is Int && event["region"] is [String: Any], "\(event)")
        #expect(enter.qos == .atLeastOnce)
        let inside = try #require(try await seen.first(timeout: .seconds(10)) {
            $0.topic.hasPrefix("venue/\(BeaconTopics.topicLevel(gatewayID))/regions/") && $0.text == "inside"
        })
        #expect(inside.topic.hasSuffix("/state"))

        // A clean stop publishes offline itself and exits 0.
        first.signal(SIGTERM)
        // The head of standard error too: a crash's backtrace names the crashed thread first.
        #expect(try await first.waitForExit(timeout: .seconds(60)) == 0, "\(first.standardError.prefix(6000)) … \(first.standardError.suffix(1000))")
        #expect(try await seen.first(timeout: .seconds(10)) { $0.topic == status && $0.text == "offline" } != nil)

        // Back online; then a SIGKILL: no DISCONNECT, so the broker publishes the will.
        let onlineBefore = seen.count { $0.topic == status && $0.text == "online" }
        let second = try serve()
        #expect(try await seen.waitForCount(above: onlineBefore, timeout: .seconds(60)) { $0.topic == status && $0.text == "online" })
        let offlineBefore = seen.count { $0.topic == status && $0.text == "offline" }
        second.signal(SIGKILL)
        _ = try await second.waitForExit()
        #expect(try await seen.waitForCount(above: offlineBefore, timeout: .seconds(30)) { $0.topic == status && $0.text == "offline" },
                "the broker did not publish the server's will")

        // The states are retained for a subscriber that comes later.
        let late = MQTTClient(configuration: MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: broker.port),
                                                                      clientIdentifier: "serve-late"))
        await late.start()
        try await late.subscribe([(status, .atLeastOnce), (inside.topic, .atLeastOnce)], timeout: .seconds(60))
        let retained = try await collect(late.messages, count: 2)
        #expect(retained.allSatisfy { $0.retain })
        #expect(retained.first { $0.topic == status }?.text == "offline")
        await late.disconnect()
        await watcher.disconnect()
    }
}

extension MessageLog {
    func count(where predicate: (MQTTMessage) -> Bool) -> Int {
        all.filter(predicate).count
    }

    /// True once more than `count` messages satisfy `predicate`, false after `timeout`.
    func waitForCount(above count: Int, timeout: Duration, where predicate: (MQTTMessage) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if self.count(where: predicate) > count { return true }
            // Waits on mosquitto (a real broker process) relaying the child server's messages.
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
