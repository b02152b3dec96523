import BeaconFleet
import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// Issue 12, the server part: the fleet checks fed by ingestion and driven by the injected
/// clock, alert events on the feed, the fleet routes and their roles.
@Suite("Fleet health on the server")
struct FleetServerTests {
    /// The server's clock, moved by the test; sightings carry the same times.
    final class ManualClock: Sendable {
        private let seconds = Mutex(1_000.0)
        var now: Double { seconds.withLock { $0 } }
        func set(_ time: Double) { seconds.withLock { $0 = time } }
    }

    struct Fleet {
        var harness: RouterHarness
        var clock: ManualClock
        var sequence = 0

        /// One batch a second from the door gateway, each holding five packets of every beacon
        /// in `heard` at 0.2 s spacing (an empty batch when none is heard: the gateway is up).
        mutating func run(_ seconds: ClosedRange<Int>, heard: [BeaconIdentity]) async throws -> [StoredEvent] {
            var events: [StoredEvent] = []
            for second in seconds {
                let end = Double(second)
                clock.set(end)
                let sightings = heard.flatMap { identity in
                    (0..<5).map { step in harness.sighting(end - 1 + Double(step) * 0.2 + 0.2, identity: identity, rssi: -60) }
                }
                sequence += 1
                events += try await harness.server.accept(SightingBatch(sequence: sequence, sightings: sightings), gatewayID: harness.gatewayID).events
                events += try await harness.server.evaluateFleet()
            }
            return events.filter { $0.fleet != nil }
        }
    }

    /// A server whose fleet learns a link in 60 s (not 10 minutes), on the office fixture.
    static func withFleet(_ body: @Sendable (inout Fleet, any TestClientProtocol) async throws -> Void) async throws {
        let clock = ManualClock()
        var configuration = ServerConfiguration()
        configuration.fleet.learningSeconds = 60
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            var tokens: [Role: String] = [:]
            for role in [Role.admin, .operator, .readOnly] {
                tokens[role] = try await store.issueToken(name: role.rawValue, role: role).token
            }
            let (gateway, gatewayToken) = try await store.registerGateway(name: "door", siteID: office.site.id)
            tokens[.gateway] = gatewayToken.token
            let server = ProximaServer(store: store, configuration: configuration, clock: { clock.now })
            let harness = RouterHarness(server: server, office: office, tokens: tokens, gatewayID: gateway.id)
            let app = Application(router: server.makeRouter())
            try await app.test(.router) { client in
                var fleet = Fleet(harness: harness, clock: clock)
                try await body(&fleet, client)
            }
            await server.shutdown()
        }
    }

    static let stranger = BeaconIdentity(uuid: Fixture.nerderyUUID, major: 1, minor: 4242)

    // MARK: Missing

    @Test func aBeaconThatStopsRaisesMissingOnTheFeedAndClearsWhenHeardAgain() async throws {
        try await Self.withFleet { fleet, client in
            let mordor = fleet.harness.office.mordor.identity
            let learning = try await fleet.run(1_001...1_080, heard: [mordor])
            #expect(learning.isEmpty, "a beacon heard steadily raises nothing: \(learning.map(\.kindName))")

            let silence = try await fleet.run(1_081...1_100, heard: [])
            let raised = try #require(silence.first { $0.fleet?.check == .missing })
            #expect(raised.kindName == "alertRaised")
            #expect(raised.fleet?.level == .alert)
            #expect(raised.fleet?.subject.name == "\(mordor.uuid.uuidString):\(mordor.major):\(mordor.minor)")
            #expect(raised.siteID == fleet.harness.office.site.id)
            #expect(raised.label == "Bloomington Office – Conference Room: Mordor")
            // Heard five times a second: missing after the 10 s floor, judged once a second.
            #expect(raised.time >= 1_080 + 10 && raised.time <= 1_080 + 12, "raised at \(raised.time)")

            // The same event is on the feed (JSON list of the SSE stream's events).
            try await client.execute(uri: "/v1/events?format=json", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                #expect(response.status == .ok)
                let events = try response.json([StoredEvent].self)
                #expect(events.contains { $0.id == raised.id && $0.fleet?.check == .missing && $0.kindName == "alertRaised" })
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.text.contains(#"proxima_beacons{state="alert"} 1"#), "\(response.text)")
                #expect(response.text.contains(#"proxima_beacons{state="ok"} 0"#))
            }
            try await client.execute(uri: "/v1/fleet?site=\(fleet.harness.office.site.id)", method: .get,
                                     headers: fleet.harness.headers(.readOnly)) { response in
                #expect(response.status == .ok)
                let reply = try response.json(FleetSummary.self)
                let row = try #require(reply.beacons.first { $0.identity == mordor })
                #expect(row.state == .alert)
                #expect(row.findings.first?.check == .missing)
                #expect(row.heardBy.first?.gateway == "door")
                #expect(row.heardBy.first?.expected == true)
                #expect(row.missingAfter == 10)
                #expect(row.lastHeard.map { $0 <= 1_080 && $0 > 1_079 } == true)
                // `proxima fleet` prints this reply as a table.
                let table = FleetTable.lines(reply)
                let line = try #require(table.first { $0.contains("Mordor") })
                #expect(line.hasPrefix("alert"))
                #expect(line.contains("door 5.0/s"), "\(line)")
                #expect(table.contains { $0.contains("missing (alert): not heard for") }, "\(table)")
            }

            let back = try await fleet.run(1_101...1_103, heard: [mordor])
            let cleared = try #require(back.first { $0.fleet?.check == .missing })
            #expect(cleared.kindName == "alertCleared")
            #expect(cleared.fleet?.alertID == raised.fleet?.alertID)
            try await client.execute(uri: "/v1/fleet/alerts", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                let alerts = try response.json(FleetAlertList.self).alerts
                #expect(alerts.isEmpty, "\(alerts)")
            }
        }
    }

    /// No batch at all (the gateway died): the checks still run once a second on the server's
    /// clock, and the beacon becomes unknown, not missing, so nothing is raised.
    @Test func aSilentGatewayMakesItsBeaconUnknownNotMissing() async throws {
        try await Self.withFleet { fleet, client in
            let mordor = fleet.harness.office.mordor.identity
            _ = try await fleet.run(1_001...1_080, heard: [mordor])
            var events: [StoredEvent] = []
            for second in 1_081...1_140 {
                fleet.clock.set(Double(second))
                events += try await fleet.harness.server.evaluateFleet()
            }
            #expect(events.isEmpty, "\(events.map { "\($0.kindName) \($0.fleet?.check.rawValue ?? "")" })")
            #expect(fleet.harness.server.ingestion.fleet?.now == 1_140)
            try await client.execute(uri: "/v1/fleet", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                let row = try #require(try response.json(FleetSummary.self).beacons.first { $0.identity == mordor })
                #expect(row.state == .unknown, "\(row.findings)")
                #expect(row.findings.first?.check == .missing)
            }
        }
    }

    // MARK: Unregistered identities and acknowledgement

    @Test func anUnregisteredIdentityIsAnAlertWithWhereItWasHeard() async throws {
        try await Self.withFleet { fleet, client in
            let events = try await fleet.run(1_001...1_003, heard: [Self.stranger])
            let raised = try #require(events.first { $0.fleet?.check == .unregistered })
            #expect(raised.fleet?.level == .warning)
            #expect(raised.siteID == nil)
            try await client.execute(uri: "/v1/fleet/alerts", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                #expect(response.status == .ok)
                let alerts = try response.json(FleetAlertList.self).alerts
                let alert = try #require(alerts.first { $0.check == .unregistered })
                #expect(alert.subject.minor == 4242)
                #expect(alert.acknowledged == false)
                #expect(alert.reason.contains("door"), "\(alert.reason)")
            }
            try await client.execute(uri: "/v1/fleet", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                let reply = try response.json(FleetSummary.self)
                let entry = try #require(reply.unregistered.first)
                #expect(entry.minor == 4242)
                #expect(entry.strongestByGateway["door"] == -60)
            }
        }
    }

    @Test func acknowledgementIsStoredAndNeedsAnOperator() async throws {
        try await Self.withFleet { fleet, client in
            _ = try await fleet.run(1_001...1_003, heard: [Self.stranger])
            let alerts = try await fleet.harness.server.store.openFleetAlerts()
            let id = try #require(alerts.first?.id)
            let path = "/v1/fleet/alerts/\(id)/ack"
            try await client.execute(uri: path, method: .post, headers: fleet.harness.headers(nil)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.errorField == "Authorization")
            }
            for role in [Role.readOnly, .gateway] {
                try await client.execute(uri: path, method: .post, headers: fleet.harness.headers(role)) { response in
                    #expect(response.status == .forbidden, "\(role)")
                }
            }
            #expect(try await fleet.harness.server.store.openFleetAlerts().first?.acknowledged == false)
            try await client.execute(uri: path, method: .post, headers: fleet.harness.headers(.operator)) { response in
                #expect(response.status == .ok, "\(response.text)")
                let alert = try response.json(FleetAlert.self)
                #expect(alert.acknowledged)
                #expect(alert.acknowledgedBy == "operator")
            }
            let now = fleet.clock.now
            try await client.execute(uri: "/v1/fleet/alerts", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                let alert = try #require(try response.json(FleetAlertList.self).alerts.first { $0.id == id })
                #expect(alert.acknowledged)
                #expect(alert.acknowledgedAt == now)
            }
            try await client.execute(uri: "/v1/fleet/alerts/abc/ack", method: .post, headers: fleet.harness.headers(.operator)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "id")
            }
            try await client.execute(uri: "/v1/fleet/alerts/99999/ack", method: .post, headers: fleet.harness.headers(.operator)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "id")
            }
        }
    }

    // MARK: Roles and refusals of the reading routes

    @Test(arguments: ["/v1/fleet", "/v1/fleet/alerts"])
    func readingRoutesCheckTheRoleAndNameTheSite(path: String) async throws {
        try await Self.withFleet { fleet, client in
            try await client.execute(uri: path, method: .get, headers: fleet.harness.headers(nil)) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: path, method: .get, headers: fleet.harness.headers(.gateway)) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorField == "Authorization")
            }
            try await client.execute(uri: path, method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: path + "?site=abc", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "site")
            }
            try await client.execute(uri: path + "?site=999", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "site")
            }
        }
    }

    // MARK: The registry

    @Test func aBeaconAddedThroughTheAPIJoinsTheFleetTable() async throws {
        try await Self.withFleet { fleet, client in
            let mordor = fleet.harness.office.mordor.identity
            _ = try await fleet.run(1_001...1_002, heard: [mordor])
            let body = #"{"siteID":\#(fleet.harness.office.site.id),"category":2,"label":"Gents","position":{"x":3,"y":4},"measuredPower":-59,"txPower":0,"battery":"CR2032","state":"deployed","installedOn":"2025-01-01"}"#
            try await client.execute(uri: "/v1/beacons", method: .post, headers: fleet.harness.headers(.operator),
                                     body: ByteBuffer(string: body)) { response in
                #expect(response.status == .created, "\(response.text)")
            }
            try await client.execute(uri: "/v1/fleet", method: .get, headers: fleet.harness.headers(.readOnly)) { response in
                let reply = try response.json(FleetSummary.self)
                #expect(reply.beacons.count == 2)
                #expect(reply.beacons.contains { $0.label == "Bloomington Office – Restroom: Gents" })
                // Mordor's learnt link survived the reload.
                #expect(reply.beacons.first { $0.identity == mordor }?.heardBy.first?.gateway == "door")
            }
        }
    }
}

extension FleetServerTests {
    /// Every fleet route is in /openapi.yaml, and the answers carry what their `required` lists say.
    @Test func openAPIDocumentsTheFleetRoutes() throws {
        let document = ProximaServer.openAPIDocument
        for path in ["/v1/fleet", "/v1/fleet/alerts", "/v1/fleet/alerts/{id}/ack"] {
            #expect(document.contains("\n  \(path):\n"), "missing \(path)")
        }
        let subject = FleetOccurrence.Subject(.gateway("door"))
        let alert = FleetAlert(id: 1, check: .identityFlood, level: .alert, reason: "flood", subject: subject, siteID: nil, label: "door",
                               raisedAt: 1, updatedAt: 1, clearedAt: nil, acknowledged: false, acknowledgedBy: nil, acknowledgedAt: nil)
        let answers: [(String, any Encodable)] = [
            ("FleetEvent", FleetOccurrence(kind: .alertRaised, time: 1, alertID: 1, check: .identityFlood, level: .alert,
                                           previousLevel: .ok, reason: "flood", subject: subject)),
            ("FleetSubject", subject),
            ("FleetAlert", alert),
        ]
        for (name, value) in answers {
            let schema = try OpenAPIContractTests.Schema(named: name, in: document)
            let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
            #expect(Set(object.keys) == schema.required, "\(name): carries \(object.keys.sorted()), documents \(schema.required.sorted())")
        }
    }
}
