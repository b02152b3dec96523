import BeaconTesting
import Foundation

/// A `proxima serve` child on SQLite in a run's temporary folder, for the runs that feed a
/// simulation through real processes (fleet-week, queue-day). The simulation's clock starts in
/// 1970, so the server takes sightings that old, and one gateway posting for many receivers is
/// not rate-limited. The caller stops it (SIGTERM) when the run ends.
enum SimulationServer {
    static func start(instance: String, directory: String, adminToken: String) async throws -> (process: ChildProcess, base: URL) {
        try await serve([
            "--database", "sqlite:\(directory)/\(instance).sqlite", "--port", "0", "--instance", instance,
            "--log-level", "warning", "--sighting-max-age", "\(Int(Date().timeIntervalSince1970) + 86_400)",
            "--rate-limit", "100000",
        ], adminToken: adminToken)
    }

    /// `proxima serve` with these options (which must include `--port 0`), once it listens.
    static func serve(_ options: [String], adminToken: String) async throws -> (process: ChildProcess, base: URL) {
        let server = try ChildProcess.proxima(["serve"] + options, environment: ["PROXIMA_ADMIN_TOKEN": adminToken])
        guard let line = try await server.waitForLine(timeout: .seconds(60), where: { $0.contains("listening on ") }),
              let range = line.range(of: #"http://[0-9.]+:[0-9]+"#, options: .regularExpression),
              let base = URL(string: String(line[range])) else {
            server.signal(SIGTERM)
            throw FleetWeekRun.RunError("proxima serve did not start: \(server.standardOutput) \(server.standardError)")
        }
        return (server, base)
    }
}
