import AsyncHTTPClient
import BeaconFleet
import BeaconGateway
import BeaconKit
@testable import BeaconServer
import Foundation
import NIOCore
import Testing

/// Issue 14's must-shows in a real browser: headless Chromium (through chromedriver) against a
/// real `proxima serve` fed by a real `proxima gateway --simulate` posting three receivers (two
/// fixed gateways and a walking phone) at 30 times real speed. One browser for the whole suite.
@Suite("Dashboard in a browser", .serialized, .enabled(if: BrowserSession.shouldRun, "needs chromium and chromedriver; always runs on CI"))
struct DashboardBrowserTests {
    static let uuid = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"
    static let hostileLabel = "<img src=x onerror=alert(1)>"
    static let speed = 30.0
    /// When b4's battery dies, in simulated seconds: after the fleet checks have learnt its
    /// coverage (10 minutes). The fleet page is open in a window of its own before the gateway
    /// starts, so no host is too slow to see b4 before its death.
    static let deathTime = 2400.0

    static let scenarioJSON = """
    {
      "name": "dashboard hall", "seed": 5, "duration": 3600, "uuid": "\(uuid)",
      "venue": {"width": 60, "height": 20, "walls": [
        {"from": {"x": 30, "y": 0}, "to": {"x": 30, "y": 8}, "attenuation": 3},
        {"from": {"x": 30, "y": 12}, "to": {"x": 30, "y": 20}, "attenuation": 3}]},
      "channel": {"sensitivity": -85, "presenceThreshold": -85, "shadowing": {"sigma": 1}, "fading": {"model": "none"}},
      "beacons": [
        {"name": "b1", "major": 1, "minor": 1001, "position": {"x": 5, "y": 10}, "interval": 0.5},
        {"name": "b2", "major": 1, "minor": 1002, "position": {"x": 20, "y": 10}, "interval": 0.5},
        {"name": "b3", "major": 1, "minor": 1003, "position": {"x": 40, "y": 10}, "interval": 0.5},
        {"name": "b4", "major": 1, "minor": 1004, "position": {"x": 55, "y": 10}, "interval": 0.5, "tlm": true}
      ],
      "receivers": [
        {"name": "gw-west", "position": {"x": 12, "y": 10, "z": 2.5}},
        {"name": "gw-east", "position": {"x": 48, "y": 10, "z": 2.5}},
        {"name": "walker", "body": false, "path": {"speed": 1.5, "loop": true,
          "waypoints": [{"x": 3, "y": 10, "pause": 20}, {"x": 57, "y": 10, "pause": 20}]}}
      ],
      "faults": [{"kind": "batteryDeath", "beacon": "b4", "start": 0, "death": \(deathTime)}]
    }
    """

    static let mapJSON = """
    {
      "name": "dashboard hall", "uuid": "\(uuid)",
      "venue": {"width": 60, "height": 20, "walls": [
        {"from": {"x": 30, "y": 0}, "to": {"x": 30, "y": 8}, "attenuation": 3},
        {"from": {"x": 30, "y": 12}, "to": {"x": 30, "y": 20}, "attenuation": 3}]},
      "rooms": [
        {"name": "west hall", "polygon": [{"x": 0, "y": 0}, {"x": 30, "y": 0}, {"x": 30, "y": 20}, {"x": 0, "y": 20}]},
        {"name": "east hall", "polygon": [{"x": 30, "y": 0}, {"x": 60, "y": 0}, {"x": 60, "y": 20}, {"x": 30, "y": 20}]}
      ],
      "doors": [{"name": "middle", "position": {"x": 30, "y": 10}}],
      "beacons": [
        {"name": "b1", "major": 1, "minor": 1001, "position": {"x": 5, "y": 10}, "measuredPower": -59},
        {"name": "b2", "major": 1, "minor": 1002, "position": {"x": 20, "y": 10}, "measuredPower": -59},
        {"name": "b3", "major": 1, "minor": 1003, "position": {"x": 40, "y": 10}, "measuredPower": -59},
        {"name": "b4", "major": 1, "minor": 1004, "position": {"x": 55, "y": 10}, "measuredPower": -59}
      ],
      "receivers": [{"name": "gw-west", "position": {"x": 12, "y": 10}}, {"name": "gw-east", "position": {"x": 48, "y": 10}}],
      "survey": [
        {"position": {"x": 10, "y": 10}, "rssi": {"b1": -73.2, "b2": -79.0}},
        {"position": {"x": 25, "y": 10}, "rssi": {"b2": -73.2, "b3": -82.5}},
        {"position": {"x": 50, "y": 10}, "rssi": {"b3": -79.0, "b4": -73.2}}
      ],
      "tagSurvey": [
        {"position": {"x": 15, "y": 8}, "rssi": {"gw-west": -71.0, "gw-east": -88.5}},
        {"position": {"x": 45, "y": 8}, "measuredPower": -62, "rssi": {"gw-west": -90.0, "gw-east": -74.0}}
      ]
    }
    """

    struct Registered: Decodable { var token: String; var gateway: Gateway }
    struct Issued: Decodable { var token: String }
    struct Cursor: Decodable { var lastID: Int }
    struct Configured: Decodable { var beaconID: Int; var label: String }

    /// What the suite measured, printed at the end (docs/dashboard.md quotes it).
    struct Figures {
        var firstLoadBytes = 0
        var staticBytes = 0
        var requests = 0
        var latencies: [Double] = []
        /// Real seconds from the gateway's start to the events page, the walker's enters and b4's
        /// missing state (the fleet page was open before the gateway started).
        var gatewayStarted = ContinuousClock.now
        var eventsOpenedAfter = 0.0
        var entersSeenAfter = 0.0
        var missingAfter = 0.0
        /// The gateways' clock when the server first reported b4 missing, and b4's threshold.
        var missingGatewayTime = 0.0
        var missingThreshold: Double?
    }

    @Test func dashboardMustShows() async throws {
        let directory = NSTemporaryDirectory() + "proxima-dashboard-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shots = ProcessInfo.processInfo.environment["PROXIMA_SCREENSHOTS"] ?? (NSTemporaryDirectory() + "proxima-dashboard-screenshots-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let scenarioPath = directory + "/hall.json"
        try Self.scenarioJSON.write(toFile: scenarioPath, atomically: true, encoding: .utf8)
        let databasePath = "\(directory)/proxima.sqlite"

        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(databasePath)", instance: "dashboard",
                                                            extra: ["--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let seeded = try await Self.seed(admin)

        let browser = try await BrowserSession.start()
        var gateway: ProximaProcess?
        do {
            var figures = Figures()
            try await Self.mustShows(browser: browser, base: base, admin: admin, seeded: seeded, databasePath: databasePath,
                                     shots: shots, figures: &figures) {
                gateway = try ProximaProcess(["gateway", "--server", base.absoluteString, "--simulate", scenarioPath, "--speed", "\(Self.speed)",
                                              "--slice", "2"] + seeded.receiverTokens.flatMap { ["--receiver-token", "\($0.key)=\($0.value)"] })
            }
            try await Self.demoSignInLink(browser: browser, directory: directory)
            print("dashboard screenshots in \(shots)")
            print("dashboard first load: \(figures.firstLoadBytes) bytes transferred in \(figures.requests) requests (static files \(figures.staticBytes) bytes)")
            print("dashboard events page opened \(String(format: "%.1f", figures.eventsOpenedAfter)) s after the gateway started, the walker's 3 enters stored by \(String(format: "%.1f", figures.entersSeenAfter)) s")
            print("dashboard fleet page opened before the gateway started, b4 missing at \(String(format: "%.1f", figures.missingAfter)) s (death at \(Self.deathTime / Self.speed) s; on the server at gateway time \(String(format: "%.1f", figures.missingGatewayTime)) s, death \(Self.deathTime) s, silence threshold \(figures.missingThreshold.map { String(format: "%.1f", $0) } ?? "unknown") s)")
            print("dashboard event latency (stored → shown), s: \(figures.latencies.map { String(format: "%.3f", $0) }.joined(separator: ", "))")
        } catch {
            Issue.record(error)
        }
        gateway?.stop()
        await browser.close()
    }

    struct Seeded {
        var receiverTokens: [String: String]
        var walkerID: String
        var operatorToken: String
        var readerToken: String
        var beaconCount: Int
        var siteID: Int
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    static func seed(_ admin: APIClient) async throws -> Seeded {
        func post(_ path: String, _ json: String, method: String = "POST") async throws -> Data {
            try await admin.data(method, path, body: Data(json.utf8))
        }
        struct Organisation: Decodable { var id: UUID }
        struct Site: Decodable { var id: Int }
        let organisation = try JSONDecoder().decode(Organisation.self, from: try await post("/v1/organisations", #"{"name":"Dashboard Hall Ltd","proximityUUIDs":["\#(uuid)"]}"#))
        _ = try await post("/v1/categories/1", #"{"name":"Spot"}"#, method: "PUT")
        let site = try JSONDecoder().decode(Site.self, from: try await post("/v1/sites",
            #"{"organisationID":"\#(organisation.id.uuidString)","name":"Exhibition Hall","address":"2 Quay","planWidth":60,"planHeight":20,"major":1,"retainEvents":7200}"#))
        let labels = ["West Door", "Counter", hostileLabel, "East Door"]
        let xs = [5, 20, 40, 55]
        let plan = zip(labels, xs).map { label, x in
            #"{"category":1,"label":\#(String(decoding: try! JSONEncoder().encode(label), as: UTF8.self)),"x":\#(x),"y":10}"#
        }.joined(separator: ",")
        let configured = try JSONDecoder().decode([Configured].self, from: try await post("/v1/sites/\(site.id)/plan", "[\(plan)]"))
        for beacon in configured {
            _ = try await post("/v1/beacons/\(beacon.beaconID)", #"{"state":"deployed","installedOn":"2026-01-01"}"#, method: "PATCH")
        }
        _ = try await post("/v1/sites/\(site.id)/map", mapJSON, method: "PUT")
        var tokens: [String: String] = [:]
        var walkerID = ""
        for name in ["gw-west", "gw-east", "walker"] {
            let registered = try JSONDecoder().decode(Registered.self, from: try await post("/v1/gateways", #"{"name":"\#(name)","siteID":\#(site.id)}"#))
            tokens[name] = registered.token
            if name == "walker" { walkerID = registered.gateway.id }
        }
        let operatorToken = try JSONDecoder().decode(Issued.self, from: try await post("/v1/tokens", #"{"name":"floor manager","role":"operator"}"#)).token
        let readerToken = try JSONDecoder().decode(Issued.self, from: try await post("/v1/tokens", #"{"name":"visitor desk","role":"read-only"}"#)).token
        return Seeded(receiverTokens: tokens, walkerID: walkerID, operatorToken: operatorToken, readerToken: readerToken, beaconCount: configured.count, siteID: site.id)
    }

    static func signIn(_ browser: BrowserSession, token: String) async throws {
        try await browser.waitFor("the sign-in form", "return !document.getElementById('sign-in').hidden")
        try await browser.type(token, into: "#token")
        try await browser.click("#sign-in-form button[type=submit]")
        try await browser.waitFor("the signed-in navigation", "return !document.getElementById('nav').hidden && document.querySelector('#nav a') !== null")
    }

    static func show(_ browser: BrowserSession, page: String) async throws {
        try await browser.run("location.hash = '#/' + arguments[0]", [.string(page)])
        try await browser.waitFor("page \(page)", "return document.querySelector('.page-body[data-page=\"' + arguments[0] + '\"]') !== null".replacingOccurrences(of: "arguments[0]", with: "'\(page)'"))
    }

    /// Waits for b4 to turn missing on the server and then on the page. The deadline is in the
    /// gateways' clock (the death plus b4's own silence threshold, plus a minute of slack),
    /// not in real seconds: on a loaded CI host the debug gateway simulates well below its
    /// 30 times real speed (b4 once turned missing 57 real seconds after a death due at 80 s,
    /// against 2 s on an idle host), and a real-time window then measured the host's load.
    /// Ten real minutes without it fail the wait whatever the clock says (the server extrapolates
    /// the gateways' clock in real seconds between batches, so a stalled gateway still ticks).
    static func waitForMissing(browser: BrowserSession, row: String, admin: APIClient, siteID: Int, figures: inout Figures) async throws {
        let isShownMissing = "return document.querySelector(\"\(row)\")?.dataset.state === 'missing'"
        var gatewayTime = -Double.infinity
        let giveUp = ContinuousClock.now + .seconds(600)
        var serverState = "unknown"
        var threshold: Double?
        while true {
            let fleet = try await admin.get("/v1/fleet?site=\(siteID)", as: FleetSummary.self)
            let health = fleet.beacons.first { $0.minor == 1004 }
            let missing = health?.findings.contains { $0.check == .missing && $0.level == .alert } ?? false
            serverState = missing ? "missing" : health?.state.rawValue ?? "absent"
            threshold = health?.missingAfter ?? threshold
            if let time = fleet.time { gatewayTime = max(gatewayTime, time) }
            if missing {
                figures.missingGatewayTime = gatewayTime
                break
            }
            let due = deathTime + (threshold ?? 120) + 60
            if gatewayTime > due {
                throw BrowserSession.Failure(description: "b4 not missing on the server at gateway time \(gatewayTime) s (death \(deathTime) s, silence threshold \(threshold.map { "\($0) s" } ?? "unknown")): state \(serverState)")
            }
            if ContinuousClock.now > giveUp {
                throw BrowserSession.Failure(description: "b4 not missing after ten minutes; the gateways' clock reached \(gatewayTime) s of the \(due) s by which it was due: state \(serverState)")
            }
            // Waits on the child `proxima gateway` clock reaching b4's silence threshold on the child `proxima serve`.
            try await Task.sleep(for: .milliseconds(500))
        }
        try await browser.waitFor("the page to show b4 missing after the server did", timeout: .seconds(20), isShownMissing)
        figures.missingAfter = Self.seconds(since: figures.gatewayStarted)
        figures.missingThreshold = threshold
    }

    /// Runs the must-shows; `startGateway` starts the simulated gateways once the fleet page is
    /// open, so it shows b4 alive before its battery dies however slow the host is.
    static func mustShows(browser: BrowserSession, base: URL, admin: APIClient, seeded: Seeded, databasePath: String,
                          shots: String, figures: inout Figures, startGateway: () throws -> Void) async throws {
        let origin = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        try await browser.open(origin + "/")
        try await signIn(browser, token: seeded.operatorToken)

        // The venue page draws every beacon of the site, its rooms and its fixed gateways.
        let drawn = try await browser.waitFor("the beacons on the plan",
            "const n = document.querySelectorAll('svg.floor [data-beacon]').length; return n > 0 ? n : null")
        #expect(drawn.number == Double(seeded.beaconCount), "the plan shows \(drawn) beacons of \(seeded.beaconCount)")
        #expect(try await browser.run("return document.querySelectorAll('svg.floor [data-room]').length").number == 2)
        #expect(try await browser.run("return document.querySelectorAll('svg.floor [data-gateway]').length").number == 2)
        // The map's survey: its scans on the plan, and the site's calibration naming them.
        #expect(try await browser.run("return document.querySelectorAll('svg.floor .survey-spot').length").number == 3)
        let calibration = try await browser.waitFor("the site's calibration under the plan",
            "const text = document.querySelector('.calibration')?.textContent ?? ''; return text.includes('survey of 3 scans') ? text : null")
        #expect(calibration.string?.contains("Phones: exponent ") == true, "the survey's fit is made at the upload: \(calibration)")
        // The map's tag survey (the carried beacons' fingerprints): its spots, and the legend counting them.
        #expect(try await browser.run("return document.querySelectorAll('svg.floor .tag-survey-spot').length").number == 2)
        #expect(try await browser.run("return [...document.querySelectorAll('.legend li')].some((item) => item.textContent === 'tag survey scan (2)')").bool == true)

        // First load: every request went to the server, and together they weigh under 300 KB.
        // Each URL's first request only: on a loaded host the signed-in page has polled its
        // API a few times before this runs (a CI run counted 171 requests and 307 KB), and the
        // repeats are not the first load.
        let entries = try await browser.run("""
            const seen = new Set();
            return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
              .filter(e => { const first = !seen.has(e.name); seen.add(e.name); return first; })
              .map(e => ({name: e.name, size: e.transferSize, type: e.initiatorType}));
            """).array ?? []
        figures.requests = entries.count
        figures.firstLoadBytes = entries.compactMap { $0["size"]?.number }.reduce(0) { $0 + Int($1) }
        figures.staticBytes = entries.filter { ($0["name"]?.string ?? "").contains("/dashboard/") || $0["type"]?.string == "navigation" }
            .compactMap { $0["size"]?.number }.reduce(0) { $0 + Int($1) }
        let foreign = entries.compactMap { $0["name"]?.string }.filter { !$0.hasPrefix(origin + "/") }
        #expect(foreign.isEmpty, "requests to other hosts: \(foreign)")
        #expect(figures.firstLoadBytes > 0 && figures.firstLoadBytes <= 300_000, "first load \(figures.firstLoadBytes) bytes")

        // The hostile label is text: the details heading shows it as typed, no <img> exists, no dialog opened.
        try await browser.click("svg.floor [data-beacon='3']")
        let heading = try await browser.waitFor("the beacon's details", "return document.querySelector('.details h3')?.textContent")
        #expect(heading.string?.contains(hostileLabel) == true, "\(heading)")
        #expect(try await browser.run("return document.querySelectorAll('img').length").number == 0)
        #expect(try await browser.openDialogText() == nil)

        // The fleet page, in a window of its own that stays on it until b4 turns missing, is open
        // before the gateway posts anything, so b4 is shown alive first on any host, and its
        // turning missing later is the page updating live.
        let workWindow = try await browser.currentWindow()
        let fleetWindow = try await browser.openWindow()
        try await browser.open(origin + "/")
        try await signIn(browser, token: seeded.operatorToken)
        try await show(browser, page: "fleet")
        try await browser.run("window.proximaNoReload = true")
        let b4 = "tr[data-beacon='\(uuid):1:1004']"
        let before = try await browser.waitFor("b4 in the fleet table", "return document.querySelector(\"\(b4)\")?.dataset.state")
        #expect(before.string != "missing", "b4 was shown missing before any gateway posted")
        try await browser.switchTo(window: workWindow)
        try startGateway()
        figures.gatewayStarted = ContinuousClock.now

        // A survey scan recorded from the venue page: the spot chosen by a click on the plan, the
        // walking phone recorded for 2 s of gateway time, saved into the map as a fourth scan.
        try await browser.click("svg.floor .door")
        let spot = try await browser.run("return [Number(document.getElementById('survey-x').value), Number(document.getElementById('survey-y').value)]")
        let chosen = spot.array?.compactMap(\.number) ?? []
        #expect(chosen.count == 2 && abs(chosen[0] - 30) < 1 && abs(chosen[1] - 10) < 1, "a click on the door in the plan's middle chose \(spot)")
        try await browser.type("walker", into: "#survey-subject")
        try await browser.run("document.getElementById('survey-seconds').value = '2'")
        try await browser.click("form[aria-label='Record a survey scan'] button[type=submit]")
        let recorded: JSONValue
        do {
            recorded = try await browser.waitFor("the survey recording to finish", timeout: .seconds(20),
                "const row = document.querySelector('#survey-rows tr'); return row?.dataset.status === 'finished' ? row.querySelector('td.heard').textContent : null")
        } catch {
            let page = try await browser.run("return document.querySelector('section.survey')?.textContent ?? null")
            let recordings = String(decoding: try await admin.data("GET", "/v1/sites/\(seeded.siteID)/survey-recordings"), as: UTF8.self)
            Issue.record("the survey section reads \(page); the server has \(recordings)")
            throw error
        }
        #expect(recorded.string?.range(of: #"^[1-4] beacons?, [1-9][0-9]* packets$"#, options: .regularExpression) != nil,
                "the walker hears some of the four fixed beacons: \(recorded)")
        try await browser.click("#survey-save")
        // The save starts the site's tracking afresh on the new map while the gateway keeps
        // posting, and each batch now writes its outbox row and runs two after-commit
        // transactions on the one SQLite connection: a loaded CI host once took over 10 s.
        try await browser.waitFor("the saved scan on the plan", timeout: .seconds(60),
            "return document.querySelectorAll('svg.floor .survey-spot').length === 4 && [...document.querySelectorAll('.legend li')].some((item) => item.textContent === 'survey scan (4)')")
        struct SavedMap: Decodable { struct Scan: Decodable { struct Point: Decodable { var x: Double; var y: Double }; var position: Point; var rssi: [String: Double] }; var survey: [Scan] }
        let savedMap = try await admin.get("/v1/sites/\(seeded.siteID)/map", as: SavedMap.self)
        #expect(savedMap.survey.count == 4 && abs((savedMap.survey.last?.position.x ?? 0) - chosen[0]) < 0.06, "the stored map has the scan at the chosen spot")
        #expect(try await browser.run("return document.querySelectorAll('#survey-rows tr').length").number == 0, "saved recordings leave the table")

        // Events: a walker's enter appears in the list, without a reload, once the server stores it.
        let opened = try await admin.get("/v1/events/cursor", as: Cursor.self).lastID
        try await show(browser, page: "events")
        try await browser.waitFor("the events table", "return document.querySelector('#event-rows tr') !== null")
        var walkerEnters: [Int] = []
        figures.eventsOpenedAfter = Self.seconds(since: figures.gatewayStarted)
        let deadline = ContinuousClock.now + .seconds(60)
        while walkerEnters.count < 3 && ContinuousClock.now < deadline {
            // Waits on the child `proxima gateway` walker posting enters to the child `proxima serve`.
            try await Task.sleep(for: .milliseconds(500))
            let events = try await admin.get("/v1/events?format=json&limit=1000&after=\(opened)", as: [StoredEvent].self)
            walkerEnters = events.filter { $0.gatewayID == seeded.walkerID && $0.kindName == "enter" }.map(\.id)
        }
        figures.entersSeenAfter = Self.seconds(since: figures.gatewayStarted)
        #expect(walkerEnters.count >= 3, "the walker entered \(walkerEnters.count) regions in 60 s")
        var shownAt: [Int: Double] = [:]
        for id in walkerEnters {
            let received = try await browser.waitFor("event \(id) in the list", timeout: .seconds(5),
                "return document.querySelector('#event-rows tr[data-event-id=\"\(id)\"]')?.dataset.receivedAt")
            shownAt[id] = Double(received.string ?? "").map { $0 / 1000 }
        }
        let stored = try await recordedTimes(ids: walkerEnters, databasePath: databasePath)
        figures.latencies = walkerEnters.compactMap { id in shownAt[id].flatMap { shown in stored[id].map { shown - $0 } } }
        #expect(figures.latencies.count == walkerEnters.count)
        // Each row came from the live stream after the server stored it. How soon (the issue's
        // 2 s) is a latency, printed here and recorded in docs/dashboard.md and by
        // `proxima-bench help-latency` for the same wake-up path; a threshold here would measure
        // the test host's load.
        #expect(figures.latencies.allSatisfy { $0 > -0.05 }, "latencies \(figures.latencies)")
        let hostileShown = try await browser.run("return [...document.querySelectorAll('#event-rows td.label')].some(td => td.textContent.includes(arguments[0]))",
                                                 [.string(hostileLabel)])
        #expect(hostileShown.bool == true, "the hostile label is not listed as text")
        #expect(try await browser.run("return document.querySelectorAll('img').length").number == 0)
        try await showsACheckIn(browser: browser, base: base, admin: admin, seeded: seeded)

        // Fleet: b4 falls silent at its battery's death and turns missing without a reload, in
        // the window that has shown it since before the gateway started; the rest goes on there.
        try await browser.closeWindow()
        try await browser.switchTo(window: fleetWindow)
        try await waitForMissing(browser: browser, row: b4, admin: admin, siteID: seeded.siteID, figures: &figures)
        #expect(try await browser.run("return window.proximaNoReload === true && performance.getEntriesByType('navigation').length === 1").bool == true)
        // Operators acknowledge from the page.
        try await browser.waitFor("an acknowledge button", timeout: .seconds(10), "return document.querySelector('button.ack') !== null")
        try await browser.click("button.ack")
        try await browser.waitFor("the acknowledgement", "return [...document.querySelectorAll('#alert-table td')].some(td => td.textContent.includes('acknowledged by floor manager'))")

        // Security (docs/security.md, "In the server"): a copy of West Door transmitting beside
        // gw-east, 43 m from the beacon, is an outOfCoverage alert in the same table, without a reload.
        let eastGateway = APIClient(base: base, token: try #require(seeded.receiverTokens["gw-east"]))
        let westDoor = BeaconIdentity(uuid: UUID(uuidString: uuid)!, major: 1, minor: 1001)
        let now = Date().timeIntervalSince1970
        let copies = (0..<5).map { step in
            Sighting(time: now - 1 + Double(step) * 0.2, receiver: "gw-east", address: BluetoothAddress(rawValue: 0xC0_0000_0001), rssi: -55,
                     frame: .iBeacon(IBeaconFrame(identity: westDoor, measuredPower: MeasuredPower(-59))))
        }
        _ = try await eastGateway.data("POST", "/v1/sightings", body: try JSONEncoder().encode(SightingBatch(sequence: nil, sightings: copies)))
        let securityRow = try await browser.waitFor("the security alert", timeout: .seconds(15), """
            const row = [...document.querySelectorAll('#alert-table tr')].find(tr => tr.textContent.includes('outOfCoverage'));
            return row ? row.textContent : null
            """)
        #expect(securityRow.string?.contains("West Door") == true, "\(securityRow)")
        #expect(securityRow.string?.contains("heard by gw-east at -55 dBm") == true, "\(securityRow)")
        #expect(try await browser.run("return window.proximaNoReload === true && performance.getEntriesByType('navigation').length === 1").bool == true)

        // The battery trend of b4 comes from the server's hourly readings: a chart exactly when
        // the server has readings for it.
        struct Battery: Decodable { struct Reading: Decodable { var millivolts: Double }; var readings: [Reading] }
        let battery = try await admin.get("/v1/fleet/battery?beacon=\(uuid):1:1004", as: Battery.self)
        try await browser.click("\(b4) button.link")
        try await browser.waitFor("b4's battery trend", "const t = document.querySelector('.trend h3')?.textContent ?? ''; return t.startsWith('Battery of') && t.includes('East Door')")
        let charted = try await browser.run("return document.querySelectorAll('.trend svg[role=img]').length")
        #expect(!battery.readings.isEmpty, "b4 sends TLM: the server should have its battery readings")
        #expect(charted.number == (battery.readings.isEmpty ? 0 : 1), "\(battery.readings.count) readings, \(charted) charts")

        // Messages: an operator adds one through the form.
        try await show(browser, page: "messages")
        try await browser.waitFor("the message form", "return document.getElementById('message-body') !== null")
        try await browser.type("Welcome to the hall", into: "#message-body")
        try await browser.click("form[aria-label='New message of the day'] button[type=submit]")
        try await browser.waitFor("the new message", "return [...document.querySelectorAll('#message-table td.body')].some(td => td.textContent === 'Welcome to the hall')")

        // Registry: the numbering plan's use comes from the server; the four seeded beacons
        // took the first minors of category 1.
        try await show(browser, page: "registry")
        try await browser.waitFor("the plan use table", "return document.querySelector('#plan-use-table tr[data-category=\"1\"]') !== null")
        let planRow = try await browser.run("""
            const row = document.querySelector('#plan-use-table tr[data-category="1"]');
            return [row.querySelector('td.used').textContent, row.querySelector('td.free').textContent];
            """)
        #expect(planRow == .array([.string("4"), .string("995")]), "\(planRow)")
        // The site's own event retention (7,200 s) is shown in the site table.
        let retention = try await browser.run("return document.querySelector('#site-table tr[data-site=\"\(seeded.siteID)\"] td.retention')?.textContent ?? null")
        #expect(retention == .string("2 h"), "\(retention)")

        // Help requests: one filed by a visitor's phone appears in the open page's queue without
        // a reload, staff acknowledge it there, and the response-time figures have a table.
        try await show(browser, page: "help")
        try await browser.waitFor("the help page", "return document.getElementById('help-queue') !== null && document.getElementById('help-queue').children.length > 0")
        struct Device: Decodable { var token: String }
        struct Filed: Decodable { var id: Int }
        let visitor = try JSONDecoder().decode(Device.self, from: try await admin.data("POST", "/v1/devices",
            body: Data(#"{"siteID":\#(seeded.siteID),"name":"visitor","consent":{"events":true,"positions":false}}"#.utf8)))
        let filed = try JSONDecoder().decode(Filed.self, from: try await APIClient(base: base, token: visitor.token)
            .data("POST", "/v1/help-requests", body: Data(#"{"name":"Ada <b>L</b>","minor":4242}"#.utf8)))
        let helpRow = "#help-table tr[data-help='\(filed.id)']"
        try await browser.waitFor("the help request in the queue", timeout: .seconds(10), "return document.querySelector(\"\(helpRow)\")?.dataset.state === 'open'")
        #expect(try await browser.run("return performance.getEntriesByType('navigation').length === 1 && window.proximaNoReload === true").bool == true)
        #expect(try await browser.run("return document.querySelector(\"\(helpRow) td.label\").textContent").string == "Ada <b>L</b>")
        try await browser.click("\(helpRow) button.help-acknowledge")
        try await browser.waitFor("the acknowledgement", "return document.querySelector(\"\(helpRow)\")?.dataset.state === 'acknowledged'")
        try await browser.waitFor("the response-time table", "return [...document.querySelectorAll('#help-metrics table caption')].some(c => c.textContent === 'Mean response times')")
        #expect(try await browser.run("return document.querySelector('#help-metrics svg[role=img]')?.getAttribute('aria-label')").string == "Mean response times")

        // Queues: a queue between two zones is listed with who waits now and its waits by hour.
        struct Zone: Decodable { var id: Int }
        let zones = try await admin.get("/v1/sites/\(seeded.siteID)/zones", as: [Zone].self)
        _ = try await admin.data("POST", "/v1/queues", body: Data(#"{"name":"Counter queue","entryZoneID":\#(zones[0].id),"serviceZoneID":\#(zones[1].id)}"#.utf8))
        try await show(browser, page: "queues")
        try await browser.waitFor("the queue table", timeout: .seconds(10), "return [...document.querySelectorAll('#queue-table td.label')].some(td => td.textContent === 'Counter queue')")
        #expect(try await browser.run("return document.querySelectorAll('.queue-history').length").number == 1)

        // Hunts and offers: a hunt and an offer made through the API are listed, names as text.
        _ = try await admin.data("POST", "/v1/hunts", body: Data(#"{"siteID":\#(seeded.siteID),"name":"Hunt <script>x</script>","stampZoneIDs":[\#(zones[0].id),\#(zones[3].id)],"timeLimit":1800,"reward":"A free coffee"}"#.utf8))
        _ = try await admin.data("POST", "/v1/offers", body: Data(#"{"zoneID":\#(zones[1].id),"title":"Two for one","body":"At the counter today"}"#.utf8))
        try await show(browser, page: "engagement")
        try await browser.waitFor("the hunt and the offer", timeout: .seconds(10),
            "return document.querySelector('section.hunt h3')?.textContent === 'Hunt <script>x</script>' && document.querySelector('#offer-table td.label')?.textContent === 'Two for one'")
        #expect(try await browser.run("return document.querySelectorAll('.page-body script').length").number == 0)
        #expect(try await browser.run("return document.querySelectorAll('.page-body button.remove').length").number == 2)

        // Screenshots of each page at desktop and phone widths.
        for (size, width, height, mobile) in [("desktop", 1280, 900, false), ("phone", 390, 844, true)] {
            try await browser.viewport(width: width, height: height, mobile: mobile)
            for page in ["venue", "events", "fleet", "registry", "help", "queues", "engagement", "messages", "devices"] {
                try await show(browser, page: page)
                try await browser.waitFor("\(page) content", "return document.querySelector('.page-body').children.length > 0")
                // Waits on Chromium finishing the page's layout and fonts, which it does not announce, before the screenshot.
                try await Task.sleep(for: .milliseconds(700))
                try await browser.screenshot(to: "\(shots)/\(size)-\(page).png")
            }
        }
        let phoneOverflow = try await browser.run("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        #expect(phoneOverflow.bool == true, "the phone layout scrolls sideways")
        try await browser.command("POST", "/goog/cdp/execute", .object(["cmd": "Emulation.clearDeviceMetricsOverride", "params": .object([:])]))

        // A read-only token: no edit controls anywhere, and a write it tries anyway is refused.
        try await browser.click("#sign-out")
        try await signIn(browser, token: seeded.readerToken)
        #expect(try await browser.run("return document.querySelector('#nav a[data-page=devices]') === null").bool == true)
        try await show(browser, page: "fleet")
        try await browser.waitFor("the fleet table", "return document.querySelector('#fleet-table') !== null && document.querySelector('#alert-table, .page-body h3') !== null")
        #expect(try await browser.run("return document.querySelectorAll('button.ack').length").number == 0)
        try await show(browser, page: "registry")
        try await browser.waitFor("the registry", "return document.querySelector('#beacon-table') !== null")
        #expect(try await browser.run("return document.querySelectorAll('#plan-text, #directory-file').length").number == 0)
        try await show(browser, page: "help")
        try await browser.waitFor("the help queue", "return document.querySelector('#help-table') !== null")
        #expect(try await browser.run("return document.querySelectorAll('#help-table button').length").number == 0)
        try await show(browser, page: "engagement")
        try await browser.waitFor("the offers", "return document.querySelector('#offer-table') !== null")
        #expect(try await browser.run("return document.querySelectorAll('.page-body button.remove').length").number == 0)
        try await show(browser, page: "messages")
        try await browser.waitFor("the message list", "return document.querySelector('#message-table') !== null")
        #expect(try await browser.run("return document.querySelectorAll('.page-body form, .page-body button.remove').length").number == 0)
        let refused = try await browser.runAsync("""
            const done = arguments[arguments.length - 1];
            fetch('/v1/messages', {method: 'POST', headers: {'Authorization': 'Bearer ' + sessionStorage.getItem('proxima.token'),
              'Content-Type': 'application/json'}, body: JSON.stringify({zoneID: 1, body: 'sneaky'})})
              .then(r => r.json().then(b => done([r.status, b.error && b.error.field])), e => done(String(e)));
            """)
        #expect(refused == .array([.number(403), .string("Authorization")]), "\(refused)")
        try await browser.click("#sign-out")
        try await browser.screenshot(to: "\(shots)/desktop-sign-in.png")
        #expect(try await browser.openDialogText() == nil)
    }

    /// `proxima serve --demo` prints a one-time link; opening it signs in, leaves no code in the
    /// address, and the code does not work a second time.
    /// A phone checks in at the counter (a zone with a one-second dwell): the check-in is listed
    /// live on the events page as its own kind, with the zone and the device.
    static func showsACheckIn(browser: BrowserSession, base: URL, admin: APIClient, seeded: Seeded) async throws {
        struct Zone: Decodable { var id: Int; var minor: Int; var label: String }
        struct Enrolled: Decodable { struct Device: Decodable { var id: String }; var device: Device; var token: String }
        let zones = try await admin.get("/v1/sites/\(seeded.siteID)/zones", as: [Zone].self)
        let counter = try #require(zones.first { $0.label.hasSuffix("Counter") }, "zones: \(zones.map(\.label))")
        _ = try await admin.data("PUT", "/v1/checkin-zones/\(counter.id)", body: Data(#"{"dwell":1,"absence":600}"#.utf8))
        let enrolment = try JSONDecoder().decode(Issued.self, from: try await admin.data("POST", "/v1/tokens",
                                                                                         body: Data(#"{"name":"kiosk","role":"enrolment"}"#.utf8))).token
        let enrolled = try JSONDecoder().decode(Enrolled.self, from: try await APIClient(base: base, token: enrolment).data("POST", "/v1/devices",
            body: Data(#"{"siteID":\#(seeded.siteID),"name":"counter phone","consent":{"events":true,"positions":false}}"#.utf8)))
        let phone = APIClient(base: base, token: enrolled.token)
        let now = Date().timeIntervalSince1970
        // Heard at the counter over three seconds, in two batches: inside for longer than the dwell.
        for (sequence, start) in [(1, now - 3), (2, now - 1)] {
            let sightings = (0..<5).map { step in
                #"{"time":\#(start + Double(step) * 0.2),"receiver":"phone","address":"AA:BB:CC:DD:EE:01","rssi":-60,"frame":{"format":"iBeacon","uuid":"\#(uuid)","major":1,"minor":\#(counter.minor),"measuredPower":-59}}"#
            }.joined(separator: ",")
            _ = try await phone.data("POST", "/v1/sightings", body: Data(#"{"sequence":\#(sequence),"sightings":[\#(sightings)]}"#.utf8))
        }
        let shown = try await browser.waitFor("the check-in in the events list", timeout: .seconds(20),
            "return document.querySelector('#event-rows tr[data-kind=\"checkIn\"]')?.textContent ?? null")
        #expect(shown.string?.contains("Counter") == true && shown.string?.contains(enrolled.device.id) == true, "\(shown)")
    }

    static func demoSignInLink(browser: BrowserSession, directory: String) async throws {
        let (demo, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/demo.sqlite", instance: "demo", extra: ["--demo"])
        defer { demo.stop() }
        var link: String?
        for _ in 0..<50 where link == nil {
            if let range = demo.outputText.range(of: #"dashboard: (http://\S+)"#, options: .regularExpression) {
                link = String(demo.outputText[range].dropFirst("dashboard: ".count))
            } else {
                // Waits on the child `proxima serve --demo` printing its sign-in link.
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let url = try #require(link, "no dashboard link in: \(demo.outputText)")
        #expect(!demo.outputText.contains("#sign-in=px_"), "the link carries a token")
        try await browser.open(url)
        let who = try await browser.waitFor("the demo sign-in", "return document.getElementById('who').textContent")
        #expect(who.string == "demo dashboard (operator)")
        #expect(try await browser.run("return location.hash").string == "")
        let code = String(url.split(separator: "=").last ?? "")
        var request = HTTPClientRequest(url: base.absoluteString + "/v1/sign-in")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: #"{"code":"\#(code)"}"#))
        let again = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        #expect(again.status == .unauthorized)
        #expect(String(buffer: try await again.body.collect(upTo: 4096)).contains(#""field":"code""#))
        try await browser.click("#sign-out")
    }

    /// When the server stored each event (its `recorded_at`), read from the SQLite file beside it.
    static func recordedTimes(ids: [Int], databasePath: String) async throws -> [Int: Double] {
        guard !ids.isEmpty else { return [:] }
        let database = try await ProximaDatabase.connect(.sqliteFile(path: databasePath))
        do {
            let list = ids.map(String.init).joined(separator: ",")
            let rows = try await database.read { db in
                try await db.raw("SELECT id, recorded_at FROM region_events WHERE id IN (\(unsafeRaw: list))").all()
                    .map { (try $0.int("id"), try $0.double("recorded_at")) }
            }
            await database.close()
            return Dictionary(rows, uniquingKeysWith: { first, _ in first })
        } catch {
            await database.close()
            throw error
        }
    }
}
