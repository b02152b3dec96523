import BeaconGateway
import BeaconMQTT
import ArgumentParser
import BeaconKit
import BeaconRotation
import BeaconServer
import Foundation
import BeaconWallet
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Proxima server: registry, gateways' sightings, events (docs/server.md).",
        discussion: "With --demo it seeds a retail shop and simulates a shopper, so events flow with no radio."
    )

    @OptionGroup var configurationFile: ConfigurationFileOptions

    @Option(help: "sqlite:PATH or postgres://user[:password]@host[:port]/database.")
    var database = "sqlite:./proxima.sqlite"

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    @Flag(help: "Seed the retail example and run the simulator as a built-in gateway.")
    var demo = false

    @Option(help: "Name of this instance in checkpoints and logs (default host:pid).")
    var instance: String?

    @Option(help: ArgumentHelp("When a gateway's silent beacon is gone: evidence (the default; docs/monitoring-and-ranging.md), adaptive, altbeacon (10 s), ios (30 s) or a fixed number of seconds.",
                               valueName: "RULE"), transform: { try ExitRuleChoice(parsing: $0) })
    var exitRule: ExitRuleChoice = .evidence

    @Option(help: "The most beacons each gateway's engine keeps; at the limit the longest-silent absent ones are forgotten.")
    var gatewayBeaconLimit = GatewaySettings.defaultBeaconLimit

    @Option(help: "Oldest sighting accepted, in seconds before this server's clock (raise it to load recordings or virtual-time simulations).")
    var sightingMaxAge = SightingTimeWindow.default.past

    @Option(help: "Batches per second each gateway may post.")
    var rateLimit: Double = 200

    @Option(help: "Event streams (SSE and WebSocket) one token may hold open at once; one more is answered 429.")
    var maxStreamsPerToken = 64

    @Option(help: "Event streams the server holds open in all; one more is answered 503.")
    var maxStreams = 1024

    @Option(help: "Seconds a request may take from its head to the end of its body; a slower one (a body trickled byte by byte) has its connection closed.")
    var requestTimeout: Int = 120

    @Option(help: "Serve HTTPS with this PEM certificate chain (with --tls-key).")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "Sign Wallet passes with this PEM pass type certificate (with --pass-key, --pass-wwdr and --public-url; docs/wallet.md).")
    var passCert: String?

    @Option(help: "The PEM private key of --pass-cert (unencrypted).")
    var passKey: String?

    @Option(help: "Apple's WWDR intermediate certificate (PEM) that issued --pass-cert.")
    var passWwdr: String?

    @Option(name: .customLong("public-url"), help: "The https URL Wallet reaches this server at; passes call back at URL/wallet.")
    var publicURL: String?

    @Option(help: "Keep stored events this long, then purge them continuously: 90d, 12h, 30m or seconds (at least a minute). Default: keep them.")
    var retainEvents: String?

    @Option(help: "Log format: text or json.")
    var logFormat = "text"

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    @Option(help: ArgumentHelp("Also publish every stored event, region and room states and fleet alerts to an MQTT broker (docs/mqtt.md).",
                               valueName: "mqtt[s]://[USER:PASS@]HOST[:PORT][/PREFIX]"))
    var mqtt: String?

    @Option(help: "Trust this PEM certificate authority for an mqtts:// broker (instead of the system's).")
    var mqttCaFile: String?

    @Flag(help: "With --mqtt, do not publish Home Assistant discovery configs for the tracked subjects' rooms.")
    var noHomeAssistant = false

    @Flag(help: "Do not run the spoof and replay checks on ingested sightings (docs/security.md, \"In the server\"); they run by default.")
    var noSecurityChecks = false

    @Option(help: ArgumentHelp("Decide each phone's rooms with its own particle filter of this many particles (at most \(ServeRunner.maximumPhoneRoomParticles)); 0, the default, decides without particles.",
                               discussion: "Without a survey of the site, particles help where walls hide beacons (home.json: 84 to 93 % of seconds in the right room) and cost a little in open offices (office.json: 97.2 to 96.4 %); each phone costs 24 bytes a particle (7.2 KB at 300) and a particle filter's update a second (docs/server.md, \"Tracking\")."))
    var phoneRoomParticles = 0

    @Option(help: "A file holding the 32-byte key (64 hex digits, base64 or raw) that seals rotation keys at rest; without it rotation keys are refused.")
    var secretKeyFile: String?

    func validate() throws {
        guard (0...ServeRunner.maximumPhoneRoomParticles).contains(phoneRoomParticles) else {
            throw ValidationError("--phone-room-particles must be in 0…\(ServeRunner.maximumPhoneRoomParticles), got \(phoneRoomParticles)")
        }
        do { _ = try DatabaseLocation(parsing: database) } catch { throw ValidationError("--database: \(error.reason)") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be in 0…65535, got \(port)") }
        guard ["text", "json"].contains(logFormat) else { throw ValidationError("--log-format must be text or json, got \(logFormat)") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical") }
        guard gatewayBeaconLimit > 0 else { throw ValidationError("--gateway-beacon-limit must be positive, got \(gatewayBeaconLimit)") }
        guard sightingMaxAge >= 0 else { throw ValidationError("--sighting-max-age must be 0 or more seconds, got \(sightingMaxAge)") }
        guard rateLimit > 0 else { throw ValidationError("--rate-limit must be positive, got \(rateLimit)") }
        guard maxStreamsPerToken > 0 else { throw ValidationError("--max-streams-per-token must be positive, got \(maxStreamsPerToken)") }
        guard maxStreams > 0 else { throw ValidationError("--max-streams must be positive, got \(maxStreams)") }
        guard requestTimeout > 0 else { throw ValidationError("--request-timeout must be positive, got \(requestTimeout)") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        let passOptions = [passCert, passKey, passWwdr, publicURL]
        guard passOptions.allSatisfy({ $0 == nil }) || passOptions.allSatisfy({ $0 != nil }) else {
            throw ValidationError("--pass-cert, --pass-key, --pass-wwdr and --public-url go together")
        }
        if let mqtt {
            try MQTTOptions.validate(broker: mqtt, caFile: mqttCaFile)
        } else if mqttCaFile != nil || noHomeAssistant {
            throw ValidationError("--mqtt-ca-file and --no-home-assistant need --mqtt URL")
        }
        if let retainEvents {
            do { _ = try EventRetention(parsing: retainEvents) } catch { throw ValidationError("--\(error.field): \(error.reason)") }
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = logFormat == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var options = ServeRunner.Options()
        options.database = try DatabaseLocation(parsing: database)
        options.host = host
        options.port = port
        if demo { options.demo = RetailDemo.start }
        if let instance { options.instanceName = instance }
        options.adminToken = ProcessInfo.processInfo.environment["PROXIMA_ADMIN_TOKEN"]
        options.exitRule = exitRule.rule
        options.batchesPerSecond = rateLimit
        options.maxEventStreamsPerToken = maxStreamsPerToken
        options.maxEventStreams = maxStreams
        options.requestTimeout = .seconds(requestTimeout)
        options.gatewayBeaconLimit = gatewayBeaconLimit
        options.sightingTimeWindow.past = sightingMaxAge
        options.eventRetention = try retainEvents.map { try EventRetention(parsing: $0) }
        options.securityChecks = !noSecurityChecks
        options.phoneRoomParticles = phoneRoomParticles
        if let mqtt {
            let broker = try MQTTBrokerURL(parsing: mqtt)
            var client = MQTTClient.Configuration(broker: broker, clientIdentifier: "proxima-serve-\(options.instanceName)")
            client.trustedCertificatesFile = mqttCaFile
            options.mqtt = client
            options.mqttMessages.prefix = broker.prefix
            options.mqttMessages.homeAssistantDiscovery = !noHomeAssistant
        }
        if let secretKeyFile {
            do throws(RotationInputError) { options.secretKey = try ServerSecret.load(path: secretKeyFile) } catch {
                throw ValidationError("\(error.field): \(error.reason)")
            }
        }
        if let tlsCert, let tlsKey {
            do { options.tls = try ServerTLS.configuration(certificatePath: tlsCert, keyPath: tlsKey) } catch {
                throw ValidationError("--\(error.field): \(error.reason)")
            }
        }
        if let passCert, let passKey, let passWwdr, let publicURL {
            options.passes = try Self.passConfiguration(certificate: passCert, key: passKey, intermediate: passWwdr, publicURL: publicURL)
        }
        try await ServeRunner.run(options, logger: Logger(label: "proxima.serve")) { line in
            // The server's announcements (its address) are informational: one that cannot be
            // written must not stop a running server, so it goes to the log's stream instead.
            do { try StandardOutput.line(line) } catch {
                printError("\(error); the line was: \(line)")
            }
        }
    }

    /// Reads and checks the pass signing files at start, so a wrong file stops the server with
    /// the option named instead of failing the first pass.
    static func passConfiguration(certificate: String, key: String, intermediate: String, publicURL: String) throws -> PassServiceConfiguration {
        func read(_ path: String, option: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("--\(option): cannot read \(path)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        do {
            return try PassServiceConfiguration(certificatePEM: try read(certificate, option: "pass-cert"),
                                                privateKeyPEM: try read(key, option: "pass-key"),
                                                intermediatePEM: try read(intermediate, option: "pass-wwdr"), publicURL: publicURL)
        } catch let error as PassError {
            throw ValidationError("\(error.field): \(error.reason)")
        }
    }
}
