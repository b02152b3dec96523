import BeaconMQTT
import BeaconTesting
import Foundation
import Testing

/// `proxima gateway --simulate … --mqtt …` as a child process against a real mosquitto: what a
/// subscriber (this package's own client) sees, including the will after SIGKILL.
@Suite("proxima gateway --mqtt with mosquitto", .serialized, .enabled(if: MosquittoBroker.shouldRun))
struct GatewayMQTTTests {
    @Test("enter event, retained states, Home Assistant discovery, ranging, and the will after SIGKILL")
    func gatewayToBroker() async throws {
        let broker = try MosquittoBroker()
        let watcher = MQTTClient(configuration: MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: broker.port),
                                                                         clientIdentifier: "watcher"))
        await watcher.start()
        try await watcher.subscribe([("proxima/#", .atLeastOnce), ("homeassistant/#", .atLeastOnce)], timeout: .seconds(60))
        let seen = MessageLog()
        let reader = Task { for await message in watcher.messages { seen.append(message) } }
        defer { reader.cancel() }

        let configuration = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-mqtt-\(getpid())")
        try FileManager.default.createDirectory(at: configuration, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: configuration) }
        let scenario = BTVirt.packageRoot.appendingPathComponent("examples/retail.json").path
        let gateway = try ChildProcess.proxima(
            ["gateway", "--simulate", scenario, "--receiver", "San Francisco till", "--speed", "4", "--no-stored-regions",
             "--mqtt", "mqtt://127.0.0.1:\(broker.port)/proxima", "--mqtt-name", "till"],
            environment: ["PROXIMA_CONFIG_DIR": configuration.path])

        let base = "proxima/till"
        let enter = try await seen.first(timeout: .seconds(30)) { $0.topic == "\(base)/events" && $0.text.contains("\"enter\"") }
        let event = try #require(enter.map { try JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] } ?? nil,
                                 "no enter event; gateway said: \(gateway.standardError)")
        #expect(event["event"] as? String == "enter")
        let region = try #require(event["region"] as? [String: Any])
        #expect((region["identifier"] as? String)?.hasPrefix("San Francisco") == true)
        #expect(enter?.qos == .atLeastOnce)

        let inside = try #require(try await seen.first(timeout: .seconds(10)) { $0.topic.hasPrefix("\(base)/regions/san-francisco") && $0.text == "inside" })
        #expect(try await seen.first(timeout: .seconds(10)) { $0.topic == "\(base)/status" && $0.text == "online" } != nil)

        // Discovery for one beacon: tracker, distance and RSSI sensors with HA's keys.
        let tracker = try #require(try await seen.first(timeout: .seconds(20)) { $0.topic.hasPrefix("homeassistant/device_tracker/") })
        let objectID = tracker.topic.split(separator: "/")[2]
        #expect(tracker.topic == "homeassistant/device_tracker/\(objectID)/config")
        let trackerConfig = try #require(try JSONSerialization.jsonObject(with: Data(tracker.payload)) as? [String: Any])
        for key in ["name", "unique_id", "state_topic", "availability_topic", "device", "payload_home", "payload_not_home", "source_type"] {
            #expect(trackerConfig[key] != nil, "device_tracker config lacks \(key)")
        }
        #expect(trackerConfig["availability_topic"] as? String == "\(base)/status")
        let device = try #require(trackerConfig["device"] as? [String: Any])
        #expect((device["identifiers"] as? [String])?.isEmpty == false)
        for suffix in ["distance", "rssi"] {
            let sensor = try #require(try await seen.first(timeout: .seconds(10)) { $0.topic == "homeassistant/sensor/\(objectID)_\(suffix)/config" },
                                      "no \(suffix) sensor config")
            let config = try #require(try JSONSerialization.jsonObject(with: Data(sensor.payload)) as? [String: Any])
            for key in ["name", "unique_id", "state_topic", "availability_topic", "device", "value_template", "unit_of_measurement"] {
                #expect(config[key] != nil, "\(suffix) sensor config lacks \(key)")
            }
            #expect(config["unique_id"] as? String == "\(objectID)_\(suffix)")
        }
        let stateTopic = try #require(trackerConfig["state_topic"] as? String)
        #expect(try await seen.first(timeout: .seconds(10)) { $0.topic == stateTopic && $0.text == "home" } != nil)
        let ranging = try #require(try await seen.first(timeout: .seconds(10)) { $0.topic.hasPrefix("\(base)/beacons/") && $0.topic.hasSuffix("/ranging") })
        let reading = try #require(try JSONSerialization.jsonObject(with: Data(ranging.payload)) as? [String: Any])
        for key in ["distance", "rssi", "proximity"] { #expect(reading[key] != nil, "ranging lacks \(key)") }

        // No DISCONNECT: the broker publishes the will.
        gateway.signal(SIGKILL)
        _ = try await gateway.waitForExit()
        #expect(try await seen.first(timeout: .seconds(10)) { $0.topic == "\(base)/status" && $0.text == "offline" } != nil)

        // What was retained reaches a subscriber that comes later.
        let late = MQTTClient(configuration: MQTTClient.Configuration(broker: MQTTBrokerURL(host: "127.0.0.1", port: broker.port),
                                                                      clientIdentifier: "late"))
        await late.start()
        try await late.subscribe([("\(base)/status", .atLeastOnce), (tracker.topic, .atLeastOnce), (inside.topic, .atLeastOnce)], timeout: .seconds(60))
        let retained = try await collect(late.messages, count: 3)
        #expect(retained.allSatisfy { $0.retain })
        #expect(Set(retained.map(\.topic)) == ["\(base)/status", tracker.topic, inside.topic])
        #expect(retained.first { $0.topic == "\(base)/status" }?.text == "offline")
        await late.disconnect()
        await watcher.disconnect()
    }
}

/// Every message a subscriber received, searchable while more arrive.
final class MessageLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [MQTTMessage] = []

    func append(_ message: MQTTMessage) { lock.withLock { messages.append(message) } }
    var all: [MQTTMessage] { lock.withLock { messages } }

    func first(timeout: Duration, where predicate: (MQTTMessage) -> Bool) async throws -> MQTTMessage? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = lock.withLock({ messages.first(where: predicate) }) { return found }
            // Waits on mosquitto (a real broker process) relaying the child gateway's messages.
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}
