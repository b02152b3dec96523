import AsyncHTTPClient
import BeaconFleet
import BeaconGateway
import BeaconKit
import BeaconServer
import BeaconSimulator
import BeaconTesting
import Foundation
import NIOCore
import NIOFoundationCompat

/// `proxima-bench fleet-week [SCENARIO] [--slice S] [--json PATH] [--poll SECONDS]`: a fault
/// scenario through the real processes, in virtual time. Starts `proxima serve` on a temporary
/// SQLite file, registers the scenario's organisation, site, gateways (its fixed receivers) and
/// beacons (those a rogue or clone did not add) through the API, runs one
/// `proxima gateway --simulate SCENARIO --speed 0 --receiver-token …` that posts every receiver
/// as its own gateway, samples `GET /v1/fleet` while it runs, then reads the alert events and
/// scores them against the scenario's faults (`FaultScore`). Prints the table; with `--json`
/// also writes the score.
enum FleetWeekRun {
    static let adminToken = "px_fleet-week-admin-token-0123456789"

    struct Options {
        var scenario = "examples/fleet-week.json"
        var slice = 20.0
        var json: String?
        var poll = 0.25
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--slice": options.slice = try Double(value(&rest, argument)).orThrow("--slice needs seconds")
            case "--json": options.json = try value(&rest, argument)
            case "--poll": options.poll = try Double(value(&rest, argument)).orThrow("--poll needs seconds")
            default:
                guard !argument.hasPrefix("--") else { throw RunError("unknown option \(argument)") }
                options.scenario = argument
            }
        }
        return options
    }

    private static func value(_ rest: inout ArraySlice<String>, _ name: String) throws -> String {
        guard let next = rest.popFirst() else { throw RunError("\(name) needs a value") }
        return next
    }

    struct RunError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func run(_ arguments: [String]) async throws {
        let options = try parse(arguments)
        let scenario = try Scenario.load(contentsOf: URL(fileURLWithPath: options.scenario))
        let directory = NSTemporaryDirectory() + "proxima-fleet-week-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let wall = ContinuousClock.now
        let (server, base) = try await SimulationServer.start(instance: "fleet-week", directory: directory, adminToken: adminToken)
        defer { server.signal(SIGTERM) }
        let api = ServerJSONClient(base: base, token: adminToken, timeout: .seconds(120), replyLimit: 256 * 1024 * 1024)
        let tokens = try await seed(scenario, api: api)

        var arguments = ["gateway", "--server", base.absoluteString, "--simulate", options.scenario, "--speed", "0",
                         "--batch", "5000", "--slice", "\(options.slice)"]
        for (name, token) in tokens.sorted(by: { $0.key < $1.key }) { arguments += ["--receiver-token", "\(name)=\(token)"] }
        let started = ContinuousClock.now
        let gateway = try ChildProcess.proxima(arguments)
        var samples: [FaultScore.Sample] = []
        var lastTime = -Double.infinity
        while true {
            let running = gateway.isRunning
            try await Task.sleep(for: .milliseconds(Int64(options.poll * 1000)))
            if let summary = try? await api.get("/v1/fleet", as: FleetSummary.self), let time = summary.time, time > lastTime {
                lastTime = time
                samples += summary.beacons.map {
                    FaultScore.Sample(time: time, identity: $0.identity, state: $0.state, daysLeft: $0.batteryDaysLeft, missingAfter: $0.missingAfter)
                }
            }
            if !running { break }
        }
        let elapsed = ContinuousClock.now - started
        _ = try await gateway.waitForExit()
        guard let posted = gateway.outputLines.last(where: { $0.hasPrefix("posted ") }),
              let sightings = Int(posted.split(separator: " ")[1]) else {
            throw RunError("proxima gateway failed: \(gateway.standardOutput) \(gateway.standardError)")
        }

        var changes: [FaultScore.AlertChange] = []
        var after = 0
        var eventCount = 0
        while true {
            let page = try await api.get("/v1/events?format=json&after=\(after)&limit=\(EventPage.maximumLimit)", as: [StoredEvent].self)
            eventCount += page.count
            for event in page {
                guard let fleet = event.fleet else { continue }
                let identity = fleet.subject.uuid.map { BeaconIdentity(uuid: $0, major: fleet.subject.major ?? 0, minor: fleet.subject.minor ?? 0) }
                changes.append(FaultScore.AlertChange(identity: identity, gateway: fleet.subject.kind == "gateway" ? fleet.subject.name : nil,
                                                      check: fleet.check, from: fleet.previousLevel, to: fleet.level, time: fleet.time))
            }
            guard let last = page.last, page.count == EventPage.maximumLimit else { break }
            after = last.id
        }
        let score = FaultScore(scenario: scenario, changes: changes, samples: samples)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("\(scenario.name): \(String(format: "%.1f", scenario.duration / 86_400)) simulated days, \(sightings) sightings, "
            + "\(tokens.count) gateways, through proxima serve (SQLite) in \(String(format: "%.0f", seconds)) s "
            + "(\(Int(Double(sightings) / max(seconds, 0.001))) sightings/s); \(changes.count) alert changes among \(eventCount) events; "
            + "\(samples.count / max(1, scenario.registeredBeacons.count)) samples of the fleet table")
        print("gateway: \(posted)")
        print(score.markdown)
        if let json = options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(score).write(to: URL(fileURLWithPath: json))
        }
        let total = ContinuousClock.now - wall
        print("whole run: \(total.components.seconds) s")
    }

    /// Registers what the scenario holds, as an operator would: one organisation owning the
    /// beacons' UUID, one site (their major), one category, every fixed receiver as a gateway
    /// of the site, and every registered beacon as deployed, with its battery type, measured
    /// power and place. Returns each gateway's token by receiver name.
    static func seed(_ scenario: Scenario, api: ServerJSONClient) async throws -> [String: String] {
        let beacons = scenario.registeredBeacons
        guard let first = beacons.first else { throw RunError("the scenario has no registered beacon") }
        guard beacons.allSatisfy({ $0.identity.uuid == first.identity.uuid && $0.identity.major == first.identity.major }) else {
            throw RunError("fleet-week registers one site: every registered beacon needs the same UUID and major")
        }
        struct NewOrganisation: Encodable { var name: String; var proximityUUIDs: [UUID] }
        struct NewGateway: Encodable { var name: String; var siteID: Int }
        struct Registered: Decodable { var token: String }
        struct CategoryName: Encodable { var name: String }
        let organisation = try await api.send("POST", "/v1/organisations",
                                              NewOrganisation(name: scenario.name, proximityUUIDs: [first.identity.uuid]), as: Organisation.self)
        let site = try await api.send("POST", "/v1/sites", NewSite(organisationID: organisation.id, uuid: first.identity.uuid,
                                                                   major: first.identity.major, name: scenario.name, address: "",
                                                                   planWidth: scenario.venue.width, planHeight: scenario.venue.height), as: Site.self)
        for category in Set(beacons.map { Int($0.identity.minor) / 1000 }) {
            _ = try await api.send("PUT", "/v1/categories/\(category)", CategoryName(name: "category \(category)"), as: Category.self)
        }
        for beacon in beacons {
            let new = NewBeacon(siteID: site.id, category: Int(beacon.identity.minor) / 1000, label: beacon.name,
                                position: beacon.position.plan, minor: beacon.identity.minor,
                                measuredPower: Int(beacon.measuredPower.dBm), txPower: Int(beacon.txPower.rounded()),
                                battery: beacon.batteryType, installedOn: "1970-01-01", state: .deployed)
            _ = try await api.send("POST", "/v1/beacons", new, as: Beacon.self)
        }
        var tokens: [String: String] = [:]
        for receiver in scenario.receivers {
            guard case .fixed = receiver.placement else { continue }
            tokens[receiver.name] = try await api.send("POST", "/v1/gateways", NewGateway(name: receiver.name, siteID: site.id), as: Registered.self).token
        }
        return tokens
    }
}

extension Optional {
    func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw FleetWeekRun.RunError(message) }
        return self
    }
}
