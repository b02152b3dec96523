import Logging
import ServiceLifecycle

/// Runs the fleet checks once a second in `proxima serve`, so alerts are raised when no batch
/// arrives at all (every gateway silent).
struct FleetCheckService: Service {
    let server: ProximaServer
    let logger: Logger

    /// Returns (never throws) when the group shuts down, so the services after it stop in order.
    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
                do { try await server.evaluateFleet() } catch {
                    logger.warning("fleet checks failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
