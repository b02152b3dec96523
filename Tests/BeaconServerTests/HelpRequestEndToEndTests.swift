import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

/// The help desk floor (examples/help-desk.json) with whole processes: the visitor's phone and
/// the helper's walk are simulated and posted by `proxima gateway`, the visitor runs
/// `proxima help-request` (advertising on the simulator) and the helper
/// `proxima help-request --helper`, against `proxima serve`.
@Suite("Help requests end to end")
struct HelpRequestEndToEndTests {
    static let scenario = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/help-desk.json")
    static let uuid = UUID(uuidString: "6A1B5D9C-3F47-4E0A-9C21-7D8E4B2F1A05")!

    struct NewGateway: Encodable { var name: String; var siteID: Int }
    struct RegisteredGateway: Decodable { var token: String }

    /// Waits until `text` appears in a process's output; returns the time it was first seen.
    static func waitFor(_ text: String, in process: ProximaProcess, timeout: Duration = .seconds(60)) async throws -> Date {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if process.outputText.contains(text) { return Date() }
            if !process.process.isRunning, !process.outputText.contains(text) { break }
            // Waits on a child `proxima` process writing its output.
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("'\(text)' did not appear: \(process.outputText.suffix(2000))")
        throw CancellationError()
    }

    static func median(_ values: some Collection<Double>) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    @Test func filedAcknowledgedReachedDoneAsTheHelperWalksUp() async throws {
        let directory = NSTemporaryDirectory() + "proxima-help-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scenarioPath = directory + "/help-desk.json"
        try FileManager.default.copyItem(atPath: Self.scenario.path, toPath: scenarioPath)
        let transmitterPath = directory + "/visitor-phone.json"

        // Simulated sightings carry the simulation's clock (1970); the server's bound is widened.
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "help-e2e",
                                                            extra: ["--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"])
        var processes = [server]
        defer {
            // `proxima gateway --simulate --receiver-token` runs its simulation to the end whatever
            // the signal; the test has what it needs by then.
            for process in processes.dropFirst() where process.process.isRunning { kill(process.process.processIdentifier, SIGKILL) }
            for process in processes { process.stop() }
        }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        struct NewOrganisation: Encodable { var name: String; var proximityUUIDs: [UUID] }
        let organisation = try await admin.send("POST", "/v1/organisations", NewOrganisation(name: "Showroom Ltd", proximityUUIDs: [Self.uuid]), as: Organisation.self)
        let site = try await admin.send("POST", "/v1/sites", NewSite(organisationID: organisation.id, major: 1, name: "Showroom"), as: Site.self)
        _ = try await admin.send("POST", "/v1/sites/\(site.id)/plan", [
            PlannedPosition(category: 1, label: "Help desk", x: 3, y: 10), PlannedPosition(category: 1, label: "Showroom", x: 24, y: 13),
        ], as: [TransmitterConfiguration].self)
        var gatewayTokens: [String] = []
        for name in ["desk gateway", "showroom gateway"] {
            let registered = try await admin.send("POST", "/v1/gateways", NewGateway(name: name, siteID: site.id), as: RegisteredGateway.self)
            gatewayTokens.append("\(name)=\(registered.token)")
        }
        let visitor = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, name: "Ann's phone", consent: DeviceConsent(events: true, positions: true)),
                                           as: RegisteredDevice.self)
        let helper = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, name: "Bob (help desk)", consent: DeviceConsent(events: true, positions: true)),
                                          as: RegisteredDevice.self)
        _ = try await admin.send("PUT", "/v1/help-helpers/\(helper.device.id)", Optional<String>.none, as: Device.self)

        // The visitor's phone listens before it asks, so the server knows the beacon it is near.
        let visitorPhone = try ProximaProcess(["gateway", "--server", base.absoluteString, "--simulate", scenarioPath, "--speed", "1",
                                               "--slice", "0.5", "--receiver-token", "visitor=\(visitor.token)"])
        processes.append(visitorPhone)
        let phoneAPI = APIClient(base: base, token: visitor.token)
        for _ in 0..<200 {
            let events = try await phoneAPI.get("/v1/devices/\(visitor.device.id)/events?format=json", as: [StoredEvent].self)
            if !events.isEmpty { break }
            // Waits on the child `proxima gateway` (the visitor's phone) and `proxima serve` storing its first event.
            try await Task.sleep(for: .milliseconds(100))
        }

        let asking = try ProximaProcess(["help-request", "--server", base.absoluteString, "--token", visitor.token, "--name", "Ann",
                                         "--simulated-transmitter", transmitterPath])
        processes.append(asking)
        _ = try await Self.waitFor("advertising on the simulator", in: asking)
        let filedLine = try #require(asking.outputText.components(separatedBy: "\n").first { $0.hasPrefix("help request ") })
        let requestID = try #require(Int(filedLine.dropFirst("help request ".count).prefix { $0.isNumber }))
        let filed = try await admin.get("/v1/help-requests/\(requestID)", as: HelpRequest.self)
        #expect(filed.state == .open && filed.name == "Ann" && filed.beacon.major == 999 && filed.beacon.uuid == Self.uuid)
        #expect(filed.nearest?.label?.contains("Showroom") == true, "\(String(describing: filed.nearest))")
        let advertised = try JSONDecoder().decode(BeaconSimulatorTransmitter.self, from: Data(contentsOf: URL(fileURLWithPath: transmitterPath)))
        #expect(advertised.minor == filed.beacon.minor && advertised.major == 999)

        // The venue with the phone now advertising: the gateways and the helper's walk.
        let venue = try ProximaProcess(["gateway", "--server", base.absoluteString, "--simulate", scenarioPath, "--speed", "1", "--slice", "0.5",
                                        "--receiver-token", "helper=\(helper.token)"] + gatewayTokens.flatMap { ["--receiver-token", $0] })
        processes.append(venue)
        // Waits on the child `proxima gateway` (the venue) hearing the advertising phone in real time; it announces nothing to await.
        try await Task.sleep(for: .seconds(2))

        let helping = try ProximaProcess(["help-request", "--helper", String(requestID), "--server", base.absoluteString, "--token", helper.token])
        processes.append(helping)
        let seen = try await Self.waitFor("help is on the way", in: asking)
        let acknowledged = try await admin.get("/v1/help-requests/\(requestID)", as: HelpRequest.self)
        let acknowledgedAt = try #require(acknowledged.acknowledgedAt)
        let lag = seen.timeIntervalSince1970 - acknowledgedAt
        // The issue's "within 1 s" is a latency, measured by `proxima-bench help-latency`
        // (BENCHMARKS.md), not asserted here where the host's load sets it. What must hold in any
        // run: the open stream told the visitor after the acknowledgement was stored, and before
        // the helper arrived.
        #expect(lag >= -0.05, "the visitor saw an acknowledgement \(lag) s before it was stored")
        #expect(acknowledged.helper?.deviceID == helper.device.id)

        #expect(try await helping.waitForExit(timeout: .seconds(90)) == 0, "\(helping.outputText)")
        #expect(try await asking.waitForExit(timeout: .seconds(30)) == 0, "\(asking.outputText)")
        #expect(asking.outputText.contains("help request \(requestID) done") && asking.outputText.contains("advertising stopped"))
        #expect(!FileManager.default.fileExists(atPath: transmitterPath), "the simulated transmitter is switched off at the end")

        let finished = try await admin.get("/v1/help-requests/\(requestID)", as: HelpRequest.self)
        #expect(finished.state == .done && finished.reachedBy == "ranging", "\(finished)")
        #expect(finished.helperDistance?.proximity == "immediate")
        let reachedAt = try #require(finished.reachedAt)
        #expect(lag < reachedAt - acknowledgedAt, "the visitor heard of the acknowledgement \(lag) s after it, the helper arrived after \(reachedAt - acknowledgedAt) s")
        // The helper's distances fall as the simulated helper walks up.
        let distances = helping.outputText.components(separatedBy: "\n").filter { $0.hasPrefix("distance ") }.compactMap {
            Double($0.dropFirst("distance ".count).prefix { $0 != " " })
        }
        try #require(distances.count >= 4, "\(helping.outputText)")
        let quarter = max(1, distances.count / 4)
        let first = Self.median(distances.prefix(quarter)), last = Self.median(distances.suffix(quarter))
        #expect(last < first, "\(distances)")
        #expect(helping.outputText.contains("gateway desk gateway") || helping.outputText.contains("gateway showroom gateway"), "\(helping.outputText)")

        let metrics = try await admin.get("/v1/help-requests/metrics?site=\(site.id)", as: HelpRequestMetrics.self)
        #expect(metrics.sites.first?.done == 1 && metrics.sites.first?.successRate == 1)
        print(helping.outputText.components(separatedBy: "\n").filter { !$0.hasPrefix("distance ") || distances.count < 8 }.joined(separator: "\n"))
        print(helping.outputText.components(separatedBy: "\n").filter { $0.hasPrefix("distance ") }.enumerated()
            .filter { $0.offset % 5 == 0 }.map(\.element).joined(separator: "\n"))
        print("help desk end to end: acknowledgement seen by the visitor \(String(format: "%.3f", lag)) s after it was stored; "
              + "\(distances.count) distance updates, first-quarter median \(String(format: "%.2f", first)) m, last-quarter median \(String(format: "%.2f", last)) m; "
              + "time to acknowledge \(String(format: "%.2f", acknowledgedAt - filed.createdAt)) s, to reach \(String(format: "%.2f", (finished.reachedAt ?? 0) - acknowledgedAt)) s")
    }
}

/// The transmitter file as the simulator reads it (BeaconSimulator's type, decoded here without importing it).
struct BeaconSimulatorTransmitter: Decodable {
    var uuid: UUID
    var major: UInt16
    var minor: UInt16
    var measuredPower: Int
}
