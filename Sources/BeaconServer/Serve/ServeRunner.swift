import BeaconGateway
import BeaconMQTT
import NIOSSL
import BeaconKit
import BeaconLocate
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

/// What a demo seeded: its running gateway, and one line saying what it simulates.
public struct ServeDemoStarted: Sendable {
    public var gateway: any Service
    public var description: String

    public init(gateway: any Service, description: String) {
        self.gateway = gateway
        self.description = description
    }
}

/// Seeds a demo into the server's store and returns its gateway, not yet running.
public typealias ServeDemo = @Sendable (ProximaServer, Logger) async throws -> ServeDemoStarted

/// `proxima serve`: opens (and migrates) the store, makes sure an admin can get in, optionally
/// seeds the retail demo, then serves until SIGINT or SIGTERM and closes everything in order.
public enum ServeRunner {
    public struct Options: Sendable {
        public var database: DatabaseLocation = .defaultLocation
        public var host = "127.0.0.1"
        public var port = 8080
        /// Seeds a demo and returns its simulated gateway (`--demo`); nil runs no demo. The
        /// executable provides it, so the server library does not depend on the simulator.
        public var demo: ServeDemo?
        public var instanceName = ProcessInfo.processInfo.hostName + ":\(ProcessInfo.processInfo.processIdentifier)"
        /// Registers this secret as an admin token when given (e.g. from PROXIMA_ADMIN_TOKEN).
        public var adminToken: String?
        /// When each gateway's silent beacons exit.
        public var exitRule: ExitRule = .default
        public var batchesPerSecond: Double = 200
        /// Event streams per token and in all (`--max-streams-per-token`, `--max-streams`).
        public var maxEventStreamsPerToken = ServerConfiguration().maxEventStreamsPerToken
        public var maxEventStreams = ServerConfiguration().maxEventStreams
        /// From a request's head to the end of its body (`--request-timeout`).
        public var requestTimeout = ServerConfiguration().requestTimeout
        public var gatewayBeaconLimit = GatewaySettings.defaultBeaconLimit
        public var sightingTimeWindow = SightingTimeWindow.default
        /// HTTPS (certificate chain and key); nil serves plain HTTP.
        public var tls: TLSConfiguration?
        /// How long stored events are kept; nil keeps them.
        public var eventRetention: EventRetention?
        /// Wallet passes (signing identity, public URL); nil answers the pass endpoints 503.
        public var passes: PassServiceConfiguration?
        /// Seals rotation keys at rest (`--secret-key-file`); nil refuses to store them.
        public var secretKey: ServerSecret?
        /// Publishes stored events to this broker (`--mqtt`); nil publishes nothing.
        public var mqtt: MQTTClient.Configuration?
        public var mqttMessages = ServerMQTTMessages.Options()
        /// Spoof and replay detection on every sighting (`--no-security-checks` turns it off).
        public var securityChecks = true
        /// Particles of each phone's own room filter (`--phone-room-particles`); 0 decides
        /// phones' rooms without particles.
        public var phoneRoomParticles = 0

        public init() {}
    }

    /// The most particles `--phone-room-particles` takes: a particle filter's work and memory
    /// grow with its particles, and beyond a few thousand a phone's cycle costs more than a
    /// second's worth of CPU on a small gateway host.
    public static let maximumPhoneRoomParticles = 5_000

    /// Runs until shut down. `announce` receives the lines a user must see once (address, token).
    ///
    /// One service group holds the database, the webhook client and the HTTP application, in
    /// that order: the group starts them in order and, on SIGINT or SIGTERM, stops them in
    /// reverse, so requests drain before deliveries stop and the database closes last.
    public static func run(_ options: Options, logger: Logger, announce: @escaping @Sendable (String) -> Void) async throws {
        let (group, _) = try await serviceGroup(options, logger: logger, gracefulShutdownSignals: [.sigterm, .sigint], announce: announce)
        try await group.run()
    }

    /// The group `run` runs, and the server in it; tests trigger its shutdown themselves.
    static func serviceGroup(_ options: Options, logger: Logger, gracefulShutdownSignals: [UnixSignal],
                             announce: @escaping @Sendable (String) -> Void) async throws -> (ServiceGroup, ProximaServer) {
        let database = try await ProximaDatabase.connect(options.database, logger: logger)
        var configuration = ServerConfiguration(instanceName: options.instanceName)
        configuration.exitRule = options.exitRule
        configuration.batchesPerSecond = options.batchesPerSecond
        configuration.maxEventStreamsPerToken = options.maxEventStreamsPerToken
        configuration.maxEventStreams = options.maxEventStreams
        configuration.requestTimeout = options.requestTimeout
        configuration.gatewayBeaconLimit = options.gatewayBeaconLimit
        configuration.sightingTimeWindow = options.sightingTimeWindow
        configuration.tls = options.tls
        configuration.passes = options.passes
        configuration.secretKey = options.secretKey
        configuration.securityChecks = options.securityChecks
        configuration.batchBurst = options.batchesPerSecond * 2
        if options.phoneRoomParticles > 0 {
            configuration.tracking.phoneRooms = .serverPhones(particles: options.phoneRoomParticles)
        }
        if let mqtt = options.mqtt {
            var messages = options.mqttMessages
            messages.instance = options.instanceName
            configuration.mqtt = ServerMQTTOutput(configuration: mqtt, options: messages, logger: logger)
        }
        let server = ProximaServer(store: Store(database: database), configuration: configuration, logger: logger)
        let application = ApplicationService(options: options, server: server, logger: logger, announce: announce)
        let group = ServiceGroup(configuration: .init(
            services: [database] + server.services + [application],
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger))
        return (group, server)
    }

    /// Prepares the store once the database runs (migrations, first admin token, demo seed),
    /// then serves HTTP until the group shuts down.
    struct ApplicationService: Service {
        let options: Options
        let server: ProximaServer
        let logger: Logger
        let announce: @Sendable (String) -> Void

        func run() async throws {
            let store = server.store
            try await store.database.migrate()
            if let secret = options.adminToken {
                if try await store.authenticate(token: secret) == nil {
                    if try await store.isKnownToken(secret) {
                        throw ServeError("PROXIMA_ADMIN_TOKEN names a token that was revoked or has expired; set a new one")
                    }
                    _ = try await store.issueToken(name: "admin (from environment)", role: .admin, secret: secret)
                }
            } else if try await !store.hasAdminToken() {
                let token = try await store.issueToken(name: "first admin", role: .admin)
                announce("admin token (shown once, store it now): \(token.token)")
            }
            // Always running: a site may carry its own retention even when the server has none.
            var services: [any Service] = [
                FleetCheckService(server: server, logger: logger),
                EventRetentionService(store: store, retention: options.eventRetention, clock: server.clock, ring: server.events, logger: logger),
            ]
            var demoSignInCode: String?
            if let demo = options.demo {
                demoSignInCode = await server.signInCodes.issue(for: try await store.issueToken(name: "demo dashboard", role: .operator).token)
                let started = try await demo(server, logger)
                services.append(started.gateway)
                let viewer = try await store.issueToken(name: "demo viewer", role: .readOnly)
                announce("demo: \(started.description); watch the events with")
                announce("  curl -N -H 'Authorization: Bearer \(viewer.token)' http://\(options.host):\(options.port)/v1/events")
            }
            let host = options.host
            let port = options.port
            let database = options.database
            let scheme = options.tls == nil ? "http" : "https"
            let announce = self.announce
            let dashboardCode = demoSignInCode
            let app = server.makeApplication(host: host, port: port, services: services) { channel in
                announce("listening on \(scheme)://\(host):\(channel.localAddress?.port ?? port) (database \(database))")
                if let dashboardCode {
                    announce("dashboard: \(scheme)://\(host):\(channel.localAddress?.port ?? port)/#sign-in=\(dashboardCode) (one-time sign-in link, valid 10 minutes)")
                }
            }
            try await app.run()
        }
    }
}
