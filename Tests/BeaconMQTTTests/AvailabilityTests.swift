import BeaconMQTT
import BeaconTesting
import Foundation
import Testing

/// Availability that follows reality, against a real mosquitto: a broker restart publishes
/// every client's will (`offline`, retained); Proxima must say `online` again after it
/// reconnects and publish its discovery again, and Home Assistant's own birth message
/// (`homeassistant/status` = `online`) must bring the discovery configs back too.
@Suite("availability across broker restarts and Home Assistant restarts", .serialized, .enabled(if: MosquittoBroker.shouldRun))
struct AvailabilityTests {
    /// A subscriber with a session the broker keeps across its restart (persistence on), so
    /// that what clients publish while it reconnects is queued for it, not missed.
    static func watcher(_ broker: MosquittoBroker, name: String, filters: [String]) async throws -> (MQTTClient, MessageLog, Task<Void, Never>) {
        var configuration = MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: broker.port), clientIdentifier: name)
        configuration.cleanSession = false
        configuration.backoff = MQTTBackoff(initial: .milliseconds(100), maximum: .milliseconds(500))
        let client = MQTTClient(configuration: configuration)
        await client.start()
        try await client.subscribe(filters.map { ($0, .atLeastOnce) }, timeout: .seconds(60))
        let seen = MessageLog()
        let reader = Task { for await message in client.messages { seen.append(message) } }
        return (client, seen, reader)
    }

    /// What a subscriber arriving now reads as `topic`'s retained message (nil: none within 10 s).
    static func retained(_ topic: String, port: Int) async throws -> String? {
        let late = MQTTClient(configuration: MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: port),
                                                                      clientIdentifier: "late-\(UUID().uuidString.prefix(8))"))
        await late.start()
        try await late.subscribe([(topic, .atLeastOnce)], timeout: .seconds(60))
        let seen = MessageLog()
        let reader = Task { for await message in late.messages { seen.append(message) } }
        let found = try await seen.first(timeout: .seconds(10)) { $0.topic == topic && $0.retain }
        reader.cancel()
        await late.disconnect()
        return found?.text
    }

    static func publishHomeAssistantBirth(port: Int) async throws {
        let homeAssistant = MQTTClient(configuration: MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: port),
                                                                               clientIdentifier: "home-assistant"))
        await homeAssistant.start()
        try await homeAssistant.publish(MQTTMessage(topic: "homeassistant/status", text: "online", qos: .atLeastOnce))
        #expect(await homeAssistant.waitUntilConnected(timeout: .seconds(60)))
        #expect(await homeAssistant.flush(timeout: .seconds(30)))
        await homeAssistant.disconnect()
    }

    @Test("gateway: online and discovery again after a broker restart and after Home Assistant's birth; offline on SIGTERM")
    func gatewayFollowsTheBroker() async throws {
        let broker = try MosquittoBroker(persistence: true)
        let (watcher, seen, reader) = try await Self.watcher(broker, name: "availability-watcher", filters: ["proxima/#", "homeassistant/#"])
        defer { reader.cancel() }
        let configuration = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-availability-\(getpid())")
        try FileManager.default.createDirectory(at: configuration, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: configuration) }
        let scenario = BTVirt.packageRoot.appendingPathComponent("examples/retail.json").path
        let gateway = try ChildProcess.proxima(
            ["gateway", "--simulate", scenario, "--receiver", "San Francisco till", "--speed", "4", "--no-stored-regions",
             "--mqtt", "mqtt://127.0.0.1:\(broker.port)/proxima", "--mqtt-name", "till"],
            environment: ["PROXIMA_CONFIG_DIR": configuration.path])
        let status = "proxima/till/status"
        let tracker = try #require(try await seen.first(timeout: .seconds(120)) { $0.topic.hasPrefix("homeassistant/device_tracker/") },
                                   "no discovery; the gateway said: \(gateway.standardError)")
        func isTrackerConfig(_ message: MQTTMessage) -> Bool { message.topic == tracker.topic }
        func isOnline(_ message: MQTTMessage) -> Bool { message.topic == status && message.text == "online" }
        #expect(try await Self.retained(status, port: broker.port) == "online")

        // The broker restarts: it publishes the gateway's will, then the gateway reconnects.
        let configsBefore = seen.count(where: isTrackerConfig)
        let onlineBefore = seen.count(where: isOnline)
        try broker.restart()
        #expect(try await seen.waitForCount(above: onlineBefore, timeout: .seconds(30), where: isOnline),
                "no online after the broker restart; the gateway said: \(gateway.standardError.suffix(2000))")
        #expect(try await seen.waitForCount(above: configsBefore, timeout: .seconds(30), where: isTrackerConfig),
                "discovery was not published again after the reconnect")
        #expect(try await Self.retained(status, port: broker.port) == "online", "the retained status is not online after the restart")
        #expect(gateway.standardError.contains("MQTT reconnected to"), "\(gateway.standardError.suffix(2000))")

        // Home Assistant restarts and announces itself: discovery again.
        let configsBeforeBirth = seen.count(where: isTrackerConfig)
        try await Self.publishHomeAssistantBirth(port: broker.port)
        #expect(try await seen.waitForCount(above: configsBeforeBirth, timeout: .seconds(30), where: isTrackerConfig),
                "homeassistant/status online did not bring discovery back")

        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit(timeout: .seconds(20)) == 0, "\(gateway.standardError.suffix(2000))")
        #expect(try await Self.retained(status, port: broker.port) == "offline")
        await watcher.disconnect()
    }

    @Test("serve --mqtt: online again, retained, after a broker restart")
    func serverFollowsTheBroker() async throws {
        let broker = try MosquittoBroker(persistence: true)
        let (watcher, seen, reader) = try await Self.watcher(broker, name: "serve-availability-watcher", filters: ["venue/#"])
        defer { reader.cancel() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-serve-availability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ChildProcess.proxima(["serve", "--demo", "--port", "0", "--database", "sqlite:\(directory.path)/proxima.sqlite",
                                               "--instance", "desk", "--mqtt", "mqtt://127.0.0.1:\(broker.port)/venue"],
                                              environment: ["PROXIMA_CONFIG_DIR": directory.path])
        let status = "venue/server/desk/status"
        func isOnline(_ message: MQTTMessage) -> Bool { message.topic == status && message.text == "online" }
        #expect(try await seen.first(timeout: .seconds(120), where: isOnline) != nil, "\(server.standardError.suffix(2000))")

        let onlineBefore = seen.count(where: isOnline)
        try broker.restart()
        #expect(try await seen.waitForCount(above: onlineBefore, timeout: .seconds(30), where: isOnline),
                "no online after the broker restart; the server said: \(server.standardError.suffix(2000))")
        #expect(try await Self.retained(status, port: broker.port) == "online")
        // A successful connect is news, not a warning.
        let connectLines = server.standardError.split(separator: "\n").filter { $0.contains("MQTT reconnected to") }
        #expect(!connectLines.isEmpty && connectLines.allSatisfy { !$0.contains("warning") }, "\(connectLines)")

        server.signal(SIGTERM)
        #expect(try await server.waitForExit(timeout: .seconds(60)) == 0, "\(server.standardError.suffix(2000))")
        #expect(try await Self.retained(status, port: broker.port) == "offline")
        await watcher.disconnect()
    }
}
