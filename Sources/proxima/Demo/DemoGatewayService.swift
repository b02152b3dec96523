import BeaconGateway
import BeaconKit
import BeaconServer
import BeaconSimulator
import Foundation
import Logging
import ServiceLifecycle

/// The demo's built-in gateway: runs the retail simulation in real time and hands its sightings
/// to the server in batches every half second, as a gateway on the network would.
struct DemoGatewayService: Service {
    let server: ProximaServer
    let scenario: Scenario
    let gatewayID: String
    let logger: Logger

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            var sequence = Int(Date().timeIntervalSince1970 * 1000)
            var pending: [Sighting] = []
            var lastFlush = ContinuousClock.now
            // Simulated time restarts at 0 on each run; shift it past the checkpoint's clock so
            // a restarted demo continues rather than travelling back in time.
            let offset = Date().timeIntervalSince1970
            for try await sighting in Simulation.sightings(scenario, pacing: .realTime) {
                var shifted = sighting
                shifted.time += offset
                pending.append(shifted)
                if ContinuousClock.now - lastFlush >= .milliseconds(500) {
                    _ = try await server.accept(SightingBatch(sequence: sequence, sightings: pending), gatewayID: gatewayID)
                    sequence += 1
                    pending.removeAll(keepingCapacity: true)
                    lastFlush = ContinuousClock.now
                }
            }
            logger.info("demo simulation finished")
        }
    }
}
