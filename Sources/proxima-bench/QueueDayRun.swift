import BeaconGateway
import BeaconKit
import BeaconServer
import BeaconSimulator
import BeaconTesting
import Foundation

/// `proxima-bench queue-day [SCENARIO] [--slice S] [--abandon-after S] [--json PATH]`: a queue
/// venue (a scenario with a `queue` key) through the real processes, in virtual time. Starts
/// `proxima serve` on a temporary SQLite file, registers the site, its beacons, every receiver
/// as an anonymous device and one queue (the scenario's entry and service beacons' zones)
/// through the API, runs one `proxima gateway --simulate SCENARIO --speed 0 --receiver-token …`
/// posting each phone with its own device token, then reads `GET /v1/queues/{id}` and compares
/// it with the simulator's truth of every customer. Prints the table; `--json` writes it too.
enum QueueDayRun {
    static let adminToken = "px_queue-day-admin-token-0123456789"

    struct Options {
        var scenario = "examples/queue.json"
        var slice = 10.0
        var abandonAfter = 120.0
        var json: String?
    }

    /// Measured against true, for docs and tests.
    struct Comparison: Codable, Sendable {
        var scenario: String
        var simulatedHours: Double
        var customers: Int
        var sightings: Int
        var wallSeconds: Double
        var trueServed: Int
        var measuredServed: Int
        var trueAbandoned: Int
        var measuredAbandoned: Int
        var trueP50: Double?
        var measuredP50: Double?
        var trueP90: Double?
        var measuredP90: Double?
        var p50Error: Double?
        var p90Error: Double?
        var report: QueueReport
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let next = rest.popFirst() else { throw FleetWeekRun.RunError("\(name) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--slice": options.slice = try Double(value(argument)).orThrow("--slice needs seconds")
            case "--abandon-after": options.abandonAfter = try Double(value(argument)).orThrow("--abandon-after needs seconds")
            case "--json": options.json = try value(argument)
            default:
                guard !argument.hasPrefix("--") else { throw FleetWeekRun.RunError("unknown option \(argument)") }
                options.scenario = argument
            }
        }
        return options
    }

    static func run(_ arguments: [String]) async throws {
        let options = try parse(arguments)
        let scenario = try Scenario.load(contentsOf: URL(fileURLWithPath: options.scenario))
        guard let venue = scenario.queue else { throw FleetWeekRun.RunError("\(options.scenario) has no \"queue\" key") }
        let directory = NSTemporaryDirectory() + "proxima-queue-day-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let (server, base) = try await SimulationServer.start(instance: "queue-day", directory: directory, adminToken: adminToken)
        defer { server.signal(SIGTERM) }
        let api = ServerJSONClient(base: base, token: adminToken, timeout: .seconds(120))
        let (queue, tokens) = try await seed(scenario, venue: venue, abandonAfter: options.abandonAfter, api: api)

        var arguments = ["gateway", "--server", base.absoluteString, "--simulate", options.scenario, "--speed", "0",
                         "--batch", "5000", "--slice", "\(options.slice)"]
        for (name, token) in tokens.sorted(by: { $0.key < $1.key }) { arguments += ["--receiver-token", "\(name)=\(token)"] }
        let started = ContinuousClock.now
        let gateway = try ChildProcess.proxima(arguments)
        _ = try await gateway.waitForExit(timeout: .seconds(3600))
        let elapsed = ContinuousClock.now - started
        guard let posted = gateway.outputLines.last(where: { $0.hasPrefix("posted ") }),
              let sightings = Int(posted.split(separator: " ")[1]) else {
            throw FleetWeekRun.RunError("proxima gateway failed: \(gateway.standardOutput) \(gateway.standardError)")
        }
        let report = try await api.get("/v1/queues/\(queue.id)?hours=168", as: QueueReport.self)
        let comparison = compare(scenario: scenario, venue: venue, report: report, sightings: sightings,
                                 wallSeconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        print(markdown(comparison))
        print(hourly(comparison, venue: venue))
        if let json = options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(comparison).write(to: URL(fileURLWithPath: json))
        }
    }

    static func compare(scenario: Scenario, venue: QueueVenue, report: QueueReport, sightings: Int, wallSeconds: Double) -> Comparison {
        let waits = venue.customers.compactMap(\.wait).sorted()
        let trueP50 = WaitHistogram.exactQuantile(0.5, of: waits), trueP90 = WaitHistogram.exactQuantile(0.9, of: waits)
        func error(_ measured: Double?, _ truth: Double?) -> Double? {
            guard let measured, let truth, truth > 0 else { return nil }
            return abs(measured - truth) / truth
        }
        return Comparison(scenario: scenario.name, simulatedHours: scenario.duration / 3600, customers: venue.customers.count,
                          sightings: sightings, wallSeconds: wallSeconds,
                          trueServed: waits.count, measuredServed: report.total.served,
                          trueAbandoned: venue.customers.filter { !$0.served }.count, measuredAbandoned: report.total.abandoned,
                          trueP50: trueP50, measuredP50: report.total.p50, trueP90: trueP90, measuredP90: report.total.p90,
                          p50Error: error(report.total.p50, trueP50), p90Error: error(report.total.p90, trueP90), report: report)
    }

    /// Each hour's served count and p50/p90, truth (by the hour a customer reached service)
    /// against the report's hours (by the hour the service enter was seen).
    static func hourly(_ comparison: Comparison, venue: QueueVenue) -> String {
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "–" }
        var lines = ["| hour | true served | measured served | true p50 / p90 (s) | measured p50 / p90 (s) |", "|---|---|---|---|---|"]
        for hour in comparison.report.hours {
            let waits = venue.customers.filter { ($0.reachedService ?? -1) >= hour.from && ($0.reachedService ?? -1) < hour.to }.compactMap(\.wait).sorted()
            lines.append("| \(Int(hour.from / 3600)) | \(waits.count) | \(hour.served) | \(seconds(WaitHistogram.exactQuantile(0.5, of: waits))) / "
                + "\(seconds(WaitHistogram.exactQuantile(0.9, of: waits))) | \(seconds(hour.p50)) / \(seconds(hour.p90)) |")
        }
        return lines.joined(separator: "\n")
    }

    static func markdown(_ comparison: Comparison) -> String {
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.0f s", $0) } ?? "–" }
        func percent(_ value: Double?) -> String { value.map { String(format: "%.1f %%", $0 * 100) } ?? "–" }
        return """
            \(comparison.scenario): \(String(format: "%.1f", comparison.simulatedHours)) simulated hours, \(comparison.customers) customers, \
            \(comparison.sightings) sightings through proxima gateway and proxima serve (SQLite) in \(String(format: "%.0f", comparison.wallSeconds)) s

            | | truth (simulator) | measured (GET /v1/queues/{id}) | error |
            |---|---|---|---|
            | served | \(comparison.trueServed) | \(comparison.measuredServed) | |
            | abandoned | \(comparison.trueAbandoned) | \(comparison.measuredAbandoned) | |
            | p50 wait | \(seconds(comparison.trueP50)) | \(seconds(comparison.measuredP50)) | \(percent(comparison.p50Error)) |
            | p90 wait | \(seconds(comparison.trueP90)) | \(seconds(comparison.measuredP90)) | \(percent(comparison.p90Error)) |
            """
    }

    /// Registers the scenario's site and beacons (one per identity), every receiver as an
    /// anonymous device sharing events, and the queue between the entry and service zones.
    static func seed(_ scenario: Scenario, venue: QueueVenue, abandonAfter: Double, api: ServerJSONClient) async throws -> (Queue, [String: String]) {
        struct NewOrganisation: Encodable { var name: String; var proximityUUIDs: [UUID] }
        struct CategoryName: Encodable { var name: String }
        let first = venue.entry
        let organisation = try await api.send("POST", "/v1/organisations", NewOrganisation(name: scenario.name, proximityUUIDs: [first.uuid]), as: Organisation.self)
        let site = try await api.send("POST", "/v1/sites", NewSite(organisationID: organisation.id, uuid: first.uuid, major: first.major, name: scenario.name,
                                                                   address: "", planWidth: scenario.venue.width, planHeight: scenario.venue.height), as: Site.self)
        _ = try await api.send("PUT", "/v1/categories/1", CategoryName(name: "queue"), as: Category.self)
        var registered: Set<BeaconIdentity> = []
        for beacon in scenario.registeredBeacons where beacon.identity.uuid == first.uuid && beacon.identity.major == first.major {
            guard registered.insert(beacon.identity).inserted else { continue }
            let new = NewBeacon(siteID: site.id, category: 1, label: beacon.name, position: beacon.position.plan,
                                minor: beacon.identity.minor, measuredPower: Int(beacon.measuredPower.dBm), txPower: Int(beacon.txPower.rounded()),
                                battery: beacon.batteryType, installedOn: "1970-01-01", state: .deployed)
            _ = try await api.send("POST", "/v1/beacons", new, as: Beacon.self)
        }
        let zones = try await api.get("/v1/sites/\(site.id)/zones", as: [Zone].self)
        guard let entry = zones.first(where: { $0.minor == venue.entry.minor }),
              let service = zones.first(where: { $0.minor == venue.serviceIdentity.minor }) else {
            throw FleetWeekRun.RunError("the entry and service zones were not created")
        }
        let queue = try await api.send("POST", "/v1/queues", NewQueue(name: scenario.name, entryZoneID: entry.id, serviceZoneID: service.id,
                                                                      abandonAfter: abandonAfter), as: Queue.self)
        var tokens: [String: String] = [:]
        for receiver in scenario.receivers {
            let device = try await api.send("POST", "/v1/devices", NewDevice(siteID: site.id, anonymous: true, consent: DeviceConsent(events: true, positions: false)),
                                            as: RegisteredDevice.self)
            tokens[receiver.name] = device.token
        }
        return (queue, tokens)
    }
}
