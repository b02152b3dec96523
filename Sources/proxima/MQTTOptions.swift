import ArgumentParser
import BeaconKit
import BeaconMQTT
import Foundation

/// `--mqtt URL` and its companions, shared by `gateway`, `monitor` and `range` (docs/mqtt.md).
struct MQTTOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Also publish events, region and beacon states, ranging and Home Assistant discovery to an MQTT broker.",
                               valueName: "mqtt[s]://[USER:PASS@]HOST[:PORT][/PREFIX]"))
    var mqtt: String?

    @Option(help: "This gateway's name in MQTT topics (default: --receiver, else the host name).")
    var mqttName: String?

    @Option(help: "The room a present beacon reports on its MQTT state topic (default home, Home Assistant's word for home).")
    var mqttRoom: String?

    @Flag(help: "Do not publish Home Assistant discovery configs.")
    var noHomeAssistant = false

    @Flag(help: "Also publish ESPresense device reports under espresense/devices/ID/NODE.")
    var espresense = false

    @Option(help: "Trust this PEM certificate authority for an mqtts:// broker (instead of the system's).")
    var mqttCaFile: String?

    func validate() throws {
        guard let mqtt else {
            if mqttName != nil || mqttRoom != nil || noHomeAssistant || espresense || mqttCaFile != nil {
                throw ValidationError("--mqtt-name, --mqtt-room, --no-home-assistant, --espresense and --mqtt-ca-file need --mqtt URL")
            }
            return
        }
        try Self.validate(broker: mqtt, caFile: mqttCaFile)
        if let mqttRoom, mqttRoom.isEmpty || mqttRoom == "not_home" {
            throw ValidationError("--mqtt-room must be a room name other than not_home, got '\(mqttRoom)'")
        }
    }

    /// `--mqtt` and `--mqtt-ca-file`, as every command that publishes checks them.
    static func validate(broker: String, caFile: String?) throws {
        do { _ = try MQTTBrokerURL(parsing: broker) } catch { throw ValidationError("--mqtt: \(error)") }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ValidationError("--mqtt-ca-file: cannot read \(caFile)")
        }
    }

    /// Connects (in the background) and announces the gateway online after every connect, or
    /// nil without --mqtt.
    func start(receiver: String?, pathLossExponent: Double) async throws -> MQTTOutput? {
        guard let mqtt else { return nil }
        let broker = try MQTTBrokerURL(parsing: mqtt)
        let name = mqttName ?? receiver ?? ProcessInfo.processInfo.hostName
        var options = BeaconMQTTPublisher.Options()
        options.room = mqttRoom ?? "home"
        options.homeAssistantDiscovery = !noHomeAssistant
        options.espresense = espresense
        options.pathLossExponent = pathLossExponent
        let publisher = BeaconMQTTPublisher(topics: BeaconTopics(prefix: broker.prefix, gateway: name), options: options)
        var configuration = MQTTClient.Configuration(broker: broker, clientIdentifier: "proxima-\(publisher.topics.gateway)-\(getpid())")
        configuration.will = publisher.will
        configuration.birth = publisher.online
        configuration.trustedCertificatesFile = mqttCaFile
        let client = MQTTClient(configuration: configuration) { printError($0) }
        await client.start()
        let output = MQTTOutput(client: client, publisher: publisher)
        await output.startWatching()
        return output
    }
}

/// The MQTT side of a run: events in, messages out, and a clean goodbye.
actor MQTTOutput {
    let client: MQTTClient
    private var publisher: BeaconMQTTPublisher
    private var warnedFull = false
    private var watchers: [Task<Void, Never>] = []

    init(client: MQTTClient, publisher: BeaconMQTTPublisher) {
        self.client = client
        self.publisher = publisher
    }

    /// Publishes the retained state again after every reconnect (a restarted broker may have
    /// lost it) and whenever Home Assistant announces itself on `homeassistant/status`.
    func startWatching() {
        let client = self.client
        watchers.append(Task {
            for await connection in client.connections {
                printError(connection.description)
                if connection.isReconnect { await self.republish() }
            }
        })
        guard publisher.options.homeAssistantDiscovery else { return }
        let discovery = publisher.discovery
        watchers.append(Task {
            // Recorded at once and sent on every connect; the wait for a first SUBACK may time
            // out while the broker is away, which changes nothing.
            _ = try? await client.subscribe([(discovery.statusTopic, .atLeastOnce)], timeout: .seconds(1))
        })
        watchers.append(Task {
            for await message in client.messages where discovery.isBirth(message) {
                await self.republish()
            }
        })
    }

    private func republish() async {
        for message in publisher.republished() {
            do { try await client.publish(message) } catch {
                if !warnedFull { printError("note: \(error) (further drops are counted, not printed)") }
                warnedFull = true
            }
        }
    }

    func send(_ event: BeaconEvent) async {
        for message in publisher.messages(for: event) {
            do {
                try await client.publish(message)
            } catch {
                if !warnedFull { printError("note: \(error) (further drops are counted, not printed)") }
                warnedFull = true
            }
        }
    }

    func note(_ sighting: Sighting) async {
        for message in publisher.note(sighting) {
            do { try await client.publish(message) } catch {
                if !warnedFull { printError("note: \(error) (further drops are counted, not printed)") }
                warnedFull = true
            }
        }
    }

    var wantsSightings: Bool { publisher.wantsSightings }

    /// Publishes `offline`, sends what is queued (up to 5 s) and disconnects.
    func finish() async {
        for watcher in watchers { watcher.cancel() }
        try? await client.publish(publisher.offline)
        await client.disconnect(flushTimeout: .seconds(5))
        let statistics = await client.statistics
        if statistics.dropped > 0 { printError("MQTT: \(statistics.dropped) messages dropped (queue full)") }
    }

    /// The source with each sighting also shown to the publisher (ESPresense reports carry the
    /// beacon's address, which the engine's events do not).
    nonisolated func tapping(_ source: SightingSource) -> SightingSource {
        let (stream, continuation) = AsyncThrowingStream<Sighting, any Error>.makeStream(bufferingPolicy: .bufferingOldest(4096))
        let reader = Task {
            do {
                for try await sighting in source.sightings {
                    await self.note(sighting)
                    while case .dropped = continuation.yield(sighting) { try await Task.sleep(for: .milliseconds(1)) }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in reader.cancel() }
        return SightingSource(sightings: stream, timing: source.timing, description: source.description, stop: source.stop)
    }
}
