import AsyncHTTPClient
import BeaconGateway
import BeaconKit
import BeaconServer
import BeaconTesting
import Foundation
import NIOCore

/// `proxima-bench soak [--minutes 30] [--loads 0.5,1] [--gateways 8] [--batch 500]
/// [--capacity-seconds 60] [--sample 30] [--database sqlite|postgres] [--retain-events 10m]`
/// (issue 16, item 4). One `proxima serve` process, built beside this benchmark, is fed compact
/// batches over loopback by paced gateways whose beacons keep changing (a new identity every
/// second batch, so tens of thousands over a run). First the gateways post as fast as the
/// server answers to measure its capacity, then they hold each load (a share of that capacity)
/// for the given minutes. Every sample prints the batches' acknowledgement latency and the
/// server process's resident memory, descriptors, threads and CPU from /proc.
enum SoakRun {
    static let adminToken = "px_soak-admin-token-0123456789abcdef"

    struct Options {
        var minutes = 30.0
        var loads = [0.5, 1.0]
        var gateways = 8
        var batchSize = 500
        var capacitySeconds = 60.0
        var sampleSeconds = 30.0
        var database = "sqlite"
        var retainEvents = "10m"
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        func number(_ name: String) throws -> Double {
            guard let text = rest.popFirst(), let value = Double(text), value > 0, value.isFinite else {
                throw FleetWeekRun.RunError("\(name) needs a positive number")
            }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--minutes": options.minutes = try number(argument)
            case "--gateways": options.gateways = Int(try number(argument))
            case "--batch": options.batchSize = Int(try number(argument))
            case "--capacity-seconds": options.capacitySeconds = try number(argument)
            case "--sample": options.sampleSeconds = try number(argument)
            case "--loads":
                let text = rest.popFirst() ?? ""
                let loads = text.split(separator: ",").compactMap { Double($0) }
                guard !loads.isEmpty, loads.count == text.split(separator: ",").count, loads.allSatisfy({ $0 > 0 && $0 <= 2 }) else {
                    throw FleetWeekRun.RunError("--loads needs shares of capacity such as 0.5,1")
                }
                options.loads = loads
            case "--database":
                guard let name = rest.popFirst(), ["sqlite", "postgres"].contains(name) else {
                    throw FleetWeekRun.RunError("--database is sqlite or postgres")
                }
                options.database = name
            case "--retain-events":
                guard let value = rest.popFirst() else { throw FleetWeekRun.RunError("--retain-events needs a duration") }
                options.retainEvents = value
            default: throw FleetWeekRun.RunError("unknown option \(argument)")
            }
        }
        return options
    }

    static func run(_ arguments: [String]) async throws {
        let options = try parse(arguments)
        let directory = NSTemporaryDirectory() + "proxima-soak-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = options.database == "postgres"
            ? try PostgresServer.shared().createDatabase(prefix: "soak")
            : "sqlite:\(directory)/soak.sqlite"

        let (server, base) = try await SimulationServer.serve([
            "--database", database, "--port", "0", "--instance", "soak", "--log-level", "warning",
            "--rate-limit", "100000", "--retain-events", options.retainEvents,
        ], adminToken: adminToken)
        let pid = server.processIdentifier
        print("proxima serve (pid \(pid)) on \(options.database), \(options.gateways) gateways posting compact batches of \(options.batchSize), "
            + "events kept \(options.retainEvents); \(ProcessInfo.processInfo.activeProcessorCount) cores shared by server and gateways")

        let api = ServerJSONClient(base: base, token: adminToken)
        struct NewGateway: Encodable { var name: String }
        struct Registered: Decodable { var token: String }
        var gateways: [SoakGateway] = []
        for index in 0..<options.gateways {
            let token = try await api.send("POST", "/v1/gateways", NewGateway(name: "soak-\(index)"), as: Registered.self).token
            gateways.append(SoakGateway(index: index, token: token))
        }
        var pool = HTTPClient.Configuration()
        pool.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = options.gateways
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: pool)
        let poster = SoakPoster(client: client, url: base.appendingPathComponent("v1/sightings").absoluteString, log: LatencyLog())

        var runSamples: [SoakSample] = []
        let started = ContinuousClock.now
        let capacity = try await hold(&gateways, poster: poster, options: options, seconds: options.capacitySeconds, sightingsPerSecond: nil,
                                      pid: pid, started: started, samples: &runSamples)
        print(String(format: "capacity: %.0f sightings/s (gateways posting as fast as acknowledged)", capacity.rate))
        print(capacity.summary(name: "capacity"))
        for load in options.loads {
            let target = load * capacity.rate
            print(String(format: "== %.0f%% of capacity: %.0f sightings/s for %g minutes", load * 100, target, options.minutes))
            let phase = try await hold(&gateways, poster: poster, options: options, seconds: options.minutes * 60, sightingsPerSecond: target,
                                       pid: pid, started: started, samples: &runSamples)
            print(phase.summary(name: String(format: "%.0f%%", load * 100)))
        }
        try await client.shutdown()
        let beforeStop = ProcessFigures.of(pid: pid)
        server.signal(SIGTERM)
        let status = try await server.waitForExit(timeout: .seconds(60))
        print("whole run: \(Int((ContinuousClock.now - started).seconds)) s; server exit status \(status.map(String.init) ?? "none (killed)")"
            + (beforeStop.map { String(format: ", %.1f MB resident at the end", $0.residentMegabytes) } ?? ""))
        if let first = runSamples.first, let last = runSamples.last {
            print(String(format: "resident memory over the run: %.1f MB at %d s, %.1f MB at %d s, peak %.1f MB; descriptors %d → %d; threads %d → %d",
                         first.figures.residentMegabytes, Int(first.elapsed), last.figures.residentMegabytes, Int(last.elapsed),
                         runSamples.map(\.figures.residentMegabytes).max() ?? 0, first.figures.fileDescriptors, last.figures.fileDescriptors,
                         first.figures.threads, last.figures.threads))
        }
    }

    /// Posts for `seconds`, paced to `sightingsPerSecond` in all (nil: as fast as acknowledged),
    /// sampling as it goes.
    static func hold(_ gateways: inout [SoakGateway], poster: SoakPoster, options: Options, seconds: Double, sightingsPerSecond: Double?,
                     pid: Int32, started: ContinuousClock.Instant, samples: inout [SoakSample]) async throws -> SoakPhase {
        let end = ContinuousClock.now + .seconds(seconds)
        let interval = sightingsPerSecond.map { Double(options.batchSize * options.gateways) / $0 }
        let batchSize = options.batchSize
        let posting = Task { [gateways] in
            try await withThrowingTaskGroup(of: SoakGateway.self) { group in
                for gateway in gateways {
                    group.addTask {
                        var gateway = gateway
                        try await poster.run(&gateway, batchSize: batchSize, interval: interval, until: end)
                        return gateway
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.index < $1.index }
            }
        }
        var phaseSamples: [SoakSample] = []
        var lastCPU = ProcessFigures.of(pid: pid)?.cpuSeconds ?? 0
        var lastSample = ContinuousClock.now
        while ContinuousClock.now < end {
            try await Task.sleep(until: min(end, lastSample + .seconds(options.sampleSeconds)))
            let now = ContinuousClock.now
            let window = await poster.log.takeWindow()
            guard let figures = ProcessFigures.of(pid: pid) else { throw FleetWeekRun.RunError("proxima serve exited during the run") }
            let span = (now - lastSample).seconds
            let sample = SoakSample(elapsed: (now - started).seconds, rate: Double(window.sightings) / span,
                                    p50: window.latencies.percentile(0.5), p99: window.latencies.percentile(0.99),
                                    figures: figures, cpuShare: (figures.cpuSeconds - lastCPU) / span)
            lastCPU = figures.cpuSeconds
            lastSample = now
            print(sample.line)
            phaseSamples.append(sample)
        }
        gateways = try await posting.value
        let phase = await poster.log.takePhase()
        samples += phaseSamples
        let sightings = Double(phase.latencies.count * options.batchSize)
        return SoakPhase(rate: sightings / seconds, target: sightingsPerSecond, latencies: phase.latencies, refusals: phase.refusals, samples: phaseSamples)
    }
}

/// One gateway's batches: 20 beacons in view, one replaced every second batch, with sightings
/// stamped on the wall clock (the server's window for sighting times is real time).
struct SoakGateway: Sendable {
    let index: Int
    let token: String
    var sequence = 0
    var lastTime = 0.0
    static let inView = 20
    static let uuid = UUID(uuidString: "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5")!

    mutating func nextBatch(size: Int) throws -> ByteBuffer {
        let now = Date().timeIntervalSince1970
        let first = max(lastTime + 0.000_01, now - 1)
        let step = max((now - first) / Double(size), 0.000_01)
        let oldest = sequence / 2
        let sightings = (0..<size).map { position -> Sighting in
            let number = oldest + position % Self.inView
            let identity = BeaconIdentity(uuid: Self.uuid, major: UInt16(index * 64 + number / 65_536 % 64), minor: UInt16(number % 65_536))
            return Sighting(time: first + Double(position) * step, receiver: "soak-\(index)", address: BluetoothAddress(rawValue: UInt64(number)),
                            rssi: Int8(-45 - (position * 7 + sequence) % 50), frame: .iBeacon(IBeaconFrame(identity: identity)))
        }
        lastTime = sightings.last?.time ?? lastTime
        defer { sequence += 1 }
        return try CompactSightingBatch.encode(SightingBatch(sequence: sequence, sightings: sightings))
    }
}

/// Posts one gateway's batches the way `proxima gateway` does (one in flight, the next only
/// after the acknowledgement), paced to an interval and catching up at most 5 s when behind.
struct SoakPoster: Sendable {
    let client: HTTPClient
    let url: String
    let log: LatencyLog

    func run(_ gateway: inout SoakGateway, batchSize: Int, interval: Double?, until end: ContinuousClock.Instant) async throws {
        let clock = ContinuousClock()
        // Gateways start spread over one interval, as real ones would.
        var next = clock.now + .seconds((interval ?? 0) * Double(gateway.index) / 8)
        while clock.now < end {
            if let interval {
                if next > clock.now { try await Task.sleep(until: next) }
                next = max(next + .seconds(interval), clock.now - .seconds(5))
            }
            let body = try gateway.nextBatch(size: batchSize)
            while clock.now < end {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(gateway.token)")
                request.headers.add(name: "Content-Type", value: CompactSightingBatch.mediaType)
                request.body = .bytes(body)
                let start = clock.now
                do {
                    let response = try await client.execute(request, timeout: .seconds(60))
                    _ = try await response.body.collect(upTo: 1 << 20)
                    if response.status == .accepted {
                        await log.record(milliseconds: (clock.now - start).seconds * 1000, sightings: batchSize)
                        break
                    }
                    await log.refused("\(response.status.code)")
                    // 429 and 503 ask for the same batch again later; anything else is a bug to count.
                    guard [429, 503].contains(response.status.code) else { break }
                    try await Task.sleep(for: .milliseconds(100))
                } catch {
                    await log.refused("\(type(of: error))")
                    try await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}

struct SoakSample: Sendable {
    var elapsed: Double
    var rate: Double
    var p50: Double
    var p99: Double
    var figures: ProcessFigures
    var cpuShare: Double

    var line: String {
        String(format: "  %5.0f s: %8.0f sightings/s, ack p50 %7.1f ms, p99 %7.1f ms; server %6.1f MB resident, %3d descriptors, %3d threads, CPU %3.0f%%",
               elapsed, rate, p50, p99, figures.residentMegabytes, figures.fileDescriptors, figures.threads, cpuShare * 100)
    }
}

struct SoakPhase: Sendable {
    var rate: Double
    var target: Double?
    var latencies: [Double]
    var refusals: [String: Int]
    var samples: [SoakSample]

    func summary(name: String) -> String {
        let memory = samples.map(\.figures.residentMegabytes)
        let half = samples.suffix(max(2, samples.count / 2))
        let slope = Self.slopePerTenMinutes(half.map { ($0.elapsed, $0.figures.residentMegabytes) })
        var text = String(format: "%@: %.0f sightings/s%@, %d batches acknowledged, p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                          name, rate, target.map { String(format: " (target %.0f)", $0) } ?? "", latencies.count,
                          latencies.percentile(0.5), latencies.percentile(0.99), latencies.max() ?? .nan)
        if let first = memory.first, let last = memory.last {
            text += String(format: "; resident %.1f → %.1f MB (peak %.1f), second half %+.2f MB per 10 min", first, last, memory.max() ?? 0, slope)
        }
        if let first = samples.first, let last = samples.last {
            text += "; descriptors \(first.figures.fileDescriptors) → \(last.figures.fileDescriptors), threads \(first.figures.threads) → \(last.figures.threads)"
        }
        text += refusals.isEmpty ? "; nothing refused" : "; refused or failed: " + refusals.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", ")
        return text
    }

    /// Least-squares slope of memory against time, in MB per 10 minutes.
    static func slopePerTenMinutes(_ points: [(Double, Double)]) -> Double {
        guard points.count >= 2 else { return .nan }
        let meanX = points.map(\.0).reduce(0, +) / Double(points.count)
        let meanY = points.map(\.1).reduce(0, +) / Double(points.count)
        let covariance = points.reduce(0.0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
        let variance = points.reduce(0.0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }
        return variance > 0 ? covariance / variance * 600 : .nan
    }
}
