import BeaconGateway
import BeaconServer
import BeaconTesting
import Foundation
import NIOCore

/// Ingestion with 1, 2 and 4 server instances on one PostgreSQL database (issue 19, item 4):
/// 8 gateways post compact batches, gateway i to instance i mod n, each instance with its own
/// HTTP listener, connection pool and engines, as separate `proxima serve` processes on one
/// database would. All run in this process on this machine's cores, with PostgreSQL beside them;
/// docs/scale.md reads the figures.
enum InstancesBenchmark {
    static let gateways = 8
    static let batchSize = 500
    /// `PROXIMA_BENCH_INSTANCE_SIGHTINGS` sets the sightings per gateway (40,000).
    static var sightingsPerGateway: Int {
        ProcessInfo.processInfo.environment["PROXIMA_BENCH_INSTANCE_SIGHTINGS"].flatMap(Int.init) ?? 40_000
    }

    static func run() async throws {
        guard PostgresServer.binaryDirectory != nil else {
            print("server-instances: skipped (PostgreSQL is not installed)")
            return
        }
        var single: Double?
        for instances in [1, 2, 4] {
            let location = try DatabaseLocation(parsing: try PostgresServer.shared().createDatabase(prefix: "instances"))
            let rate = try await measure(instances: instances, location: location)
            if let single {
                print(String(format: "postgres: %d instances / 1 instance = %.2f×", instances, rate / single))
            } else {
                single = rate
            }
        }
    }

    static func measure(instances: Int, location: DatabaseLocation) async throws -> Double {
        var servers: [BenchServer] = []
        // One after the other: the first migrates the database, the others find it current.
        for _ in 0..<instances { servers.append(try await BenchServer.start(location)) }
        var tokens: [String] = []
        for index in 0..<gateways {
            tokens.append(try await servers[0].store.registerGateway(name: "instances-\(index)").1.token)
        }
        let row = ServerBenchmark.Row(format: .binary, batchSize: batchSize, sightingsPerGateway: sightingsPerGateway)
        let bodies = try (0..<gateways).map { try ServerBenchmark.makeBodies(gateway: $0, row: row) }
        let gatewayTokens = tokens
        let posting = servers

        let clock = ContinuousClock()
        let cpuBefore = (bench: CPUTime.ofThisProcess(), postgres: CPUTime.ofProcesses(named: "postgres"))
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for gateway in 0..<gateways {
                group.addTask {
                    let server = posting[gateway % posting.count]
                    for body in bodies[gateway] {
                        try await server.post(body, token: gatewayTokens[gateway], contentType: CompactSightingBatch.mediaType)
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = start.duration(to: clock.now).seconds
        let benchCPU = CPUTime.ofThisProcess() - cpuBefore.bench
        let postgresCPU = CPUTime.ofProcesses(named: "postgres") - cpuBefore.postgres
        let sightings = gateways * row.batchesPerGateway * batchSize
        let events = try await servers[0].store.events(after: 0, limit: 1_000_000).count
        let rate = Double(sightings) / seconds
        print(String(format: "postgres, %d instance%@: %d sightings in %.2f s = %.0f sightings/s (%d gateways, %d per batch, %d region events)",
                     instances, instances == 1 ? "" : "s", sightings, seconds, rate, gateways, batchSize, events))
        print(String(format: "  CPU: servers and gateways %.1f s (%.0f%% of one core), PostgreSQL %.1f s (%.0f%%), %.1f µs of CPU a sighting in all",
                     benchCPU, 100 * benchCPU / seconds, postgresCPU, 100 * postgresCPU / seconds, 1e6 * (benchCPU + postgresCPU) / Double(sightings)))
        for server in servers { try await server.stop() }
        return rate
    }
}

/// CPU seconds (user and system) from /proc, to see where the cores went during a row.
enum CPUTime {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func ofThisProcess() -> Double { ofProcess("self") ?? 0 }

    static func ofProcesses(named name: String) -> Double {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) }.reduce(0) { total, pid in
            guard let command = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                  command.trimmingCharacters(in: .whitespacesAndNewlines) == name else { return total }
            return total + (ofProcess(pid) ?? 0)
        }
    }

    /// utime and stime, fields 14 and 15 of /proc/PID/stat (after the parenthesised name).
    static func ofProcess(_ pid: String) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }
}
