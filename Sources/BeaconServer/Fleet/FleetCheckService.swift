import Logging
import ServiceLifecycle

/// Runs the fleet checks once a second in `proxima serve`, so alerts are raised when no batch
/// arrives at all (every gateway silent).
struct FleetCheckService: Service {
    let server: ProximaServer
    let logger: Logger

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(1))
                do { try await server.evaluateFleet() } catch {
                    logger.warning("fleet checks failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
