import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// `proxima serve`: opens (and migrates) the store, makes sure an admin can get in, optionally
/// seeds the retail demo, then serves until SIGINT or SIGTERM and closes everything in order.
public enum ServeRunner {
    public struct Options: Sendable {
        public var database: DatabaseLocation = .defaultLocation
        public var host = "127.0.0.1"
        public var port = 8080
        public var demo = false
        public var instanceName = ProcessInfo.processInfo.hostName + ":\(ProcessInfo.processInfo.processIdentifier)"
        /// Registers this secret as an admin token when given (e.g. from PROXIMA_ADMIN_TOKEN).
        public var adminToken: String?
        /// A fixed exit delay in seconds, or nil for the engine's adaptive exit rule.
        public var exitAfter: Double?
        public var batchesPerSecond: Double = 200
        public var gatewayBeaconLimit = GatewaySettings.defaultBeaconLimit
        public var sightingTimeWindow = SightingTimeWindow.default

        public init() {}
    }

    /// Runs until shut down. `announce` receives the lines a user must see once (address, token).
    public static func run(_ options: Options, logger: Logger, announce: @escaping @Sendable (String) -> Void) async throws {
        let database = try await ProximaDatabase.open(options.database, logger: logger)
        let store = Store(database: database)
        var configuration = ServerConfiguration(instanceName: options.instanceName)
        configuration.exitAfter = options.exitAfter
        configuration.batchesPerSecond = options.batchesPerSecond
        configuration.gatewayBeaconLimit = options.gatewayBeaconLimit
        configuration.sightingTimeWindow = options.sightingTimeWindow
        configuration.batchBurst = options.batchesPerSecond * 2
        let server = ProximaServer(store: store, configuration: configuration, logger: logger)
        do {
            if let secret = options.adminToken {
                if try await store.authenticate(token: secret) == nil {
                    _ = try await store.issueToken(name: "admin (from environment)", role: .admin, secret: secret)
                }
            } else if try await !store.hasAdminToken() {
                let token = try await store.issueToken(name: "first admin", role: .admin)
                announce("admin token (shown once, store it now): \(token.token)")
            }
            var services: [any Service] = []
            if options.demo {
                let (identities, gatewayID) = try await RetailDemo.seed(store)
                services.append(DemoGatewayService(server: server, scenario: RetailDemo.scenario(identities: identities),
                                                   gatewayID: gatewayID, logger: logger))
                let viewer = try await store.issueToken(name: "demo viewer", role: .readOnly)
                announce("demo: simulating a shopper in '\(RetailDemo.siteName)'; watch the events with")
                announce("  curl -N -H 'Authorization: Bearer \(viewer.token)' http://\(options.host):\(options.port)/v1/events")
            }
            let host = options.host
            let app = server.makeApplication(host: host, port: options.port, services: services) { channel in
                let port = channel.localAddress?.port ?? options.port
                announce("listening on http://\(host):\(port) (database \(options.database))")
            }
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            await server.shutdown()
            await database.close()
            throw error
        }
        await server.shutdown()
        await database.close()
    }
}
