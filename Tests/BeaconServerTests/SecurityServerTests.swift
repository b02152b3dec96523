import BeaconFleet
import BeaconKit
import BeaconSecurity
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// Issue 15 in the server: every posted sighting goes through the site's security detector with
/// the server's arrival time, and what it raises reaches the event feed as a fleet alert.
@Suite("Spoof and replay checks in the server")
struct SecurityServerTests {
    final class ManualClock: Sendable {
        private let seconds = Mutex(10_000.0)
        var now: Double { seconds.withLock { $0 } }
        func set(_ time: Double) { seconds.withLock { $0 = time } }
    }

    /// The office fixture (60 × 40 m, Mordor at (12, 8)) with "Shire" by the west gateway at
    /// (2, 5) and "Gondor" by the east gateway at (58, 5), both gateways placed by the site's map.
    struct Venue {
        var server: ProximaServer
        var clock: ManualClock
        var siteID: Int
        var shire: BeaconIdentity
        var gondor: BeaconIdentity
        var mordor: BeaconIdentity
        var gateways: [String: String]
        var tokens: [Role: String]
        var sequence = 0

        func headers(_ role: Role?) -> HTTPFields {
            var fields: HTTPFields = [.contentType: "application/json"]
            if let role, let token = tokens[role] { fields[.authorization] = "Bearer \(token)" }
            return fields
        }

        static func sighting(_ identity: BeaconIdentity, by gateway: String, rssi: Int8, at time: Double) -> Sighting {
            Sighting(time: time, receiver: gateway, address: BluetoothAddress(rawValue: UInt64(identity.minor) + 0xC0_0000_0000), rssi: rssi,
                     frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))))
        }

        /// One second: the server's clock moves to `second`, then each gateway posts what it heard
        /// in the second before, five packets of each beacon, stamped `lead` seconds ahead.
        /// Honest gateways hear their own beacon loudly and Mordor as far as it is; `extra` adds to it.
        mutating func run(_ seconds: ClosedRange<Int>, lead: [String: Double] = [:], honest: Bool = true,
                          extra: (String) -> [(BeaconIdentity, Int)] = { _ in [] }) async throws -> [StoredEvent] {
            let (shire, gondor, mordor) = (self.shire, self.gondor, self.mordor)
            func heard(_ gateway: String) -> [(BeaconIdentity, Int)] {
                let own: [(BeaconIdentity, Int)] = gateway == "west" ? [(shire, -62), (mordor, -80)] : [(gondor, -62), (mordor, -93)]
                return (honest ? own : []) + extra(gateway)
            }
            var events: [StoredEvent] = []
            for second in seconds {
                clock.set(Double(second))
                for gateway in gateways.keys.sorted() {
                    // Written out with its types: inferred through the nested closures, this one
                    // expression took ten seconds of the test build's type checking.
                    let start: Double = Double(second) - 1 + (lead[gateway] ?? 0)
                    var sightings: [Sighting] = []
                    for (identity, rssi) in heard(gateway) {
                        for step in 0..<5 {
                            let time: Double = start + Double(step) * 0.2
                            sightings.append(Self.sighting(identity, by: gateway, rssi: Int8(rssi), at: time))
                        }
                    }
                    sequence += 1
                    events += try await server.accept(SightingBatch(sequence: sequence, sightings: sightings), gatewayID: gateways[gateway]!).events
                }
            }
            return events.filter { $0.fleet != nil }
        }
    }

    static let mapJSON = """
    {"venue": {"width": 60, "height": 40},
     "receivers": [{"name": "west", "position": {"x": 2, "y": 5}}, {"name": "east", "position": {"x": 58, "y": 5}}]}
    """

    static func withVenue(securityChecks: Bool = true, _ body: @Sendable (inout Venue, any TestClientProtocol) async throws -> Void) async throws {
        let clock = ManualClock()
        var configuration = ServerConfiguration()
        configuration.securityChecks = securityChecks
        // Only this suite's checks: the fleet's own (missing, clone) would add their alerts.
        configuration.fleetChecks = false
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let shire = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 1, label: "Shire", position: Position(x: 2, y: 4), state: .deployed))
            let gondor = try await store.addBeacon(NewBeacon(siteID: office.site.id, category: 1, label: "Gondor", position: Position(x: 58, y: 4), state: .deployed))
            _ = try await store.setSiteMap(siteID: office.site.id, document: Data(mapJSON.utf8))
            var tokens: [Role: String] = [:]
            for role in [Role.admin, .operator, .readOnly] {
                tokens[role] = try await store.issueToken(name: role.rawValue, role: role).token
            }
            var gateways: [String: String] = [:]
            for name in ["west", "east"] {
                gateways[name] = try await store.registerGateway(name: name, siteID: office.site.id).0.id
            }
            let server = ProximaServer(store: store, configuration: configuration, clock: { clock.now })
            let app = Application(router: server.makeRouter())
            let (gatewayIDs, roleTokens) = (gateways, tokens)
            try await app.test(.router) { client in
                var venue = Venue(server: server, clock: clock, siteID: office.site.id, shire: shire.identity, gondor: gondor.identity,
                                  mordor: office.mordor.identity, gateways: gatewayIDs, tokens: roleTokens)
                try await body(&venue, client)
            }
            await server.shutdown()
        }
    }

    @Test func honestBatchesRaiseNothingAndACopyFarFromItsBeaconRaisesOutOfCoverageOnTheFeed() async throws {
        try await Self.withVenue { venue, client in
            let honest = try await venue.run(10_001...10_120)
            #expect(honest.isEmpty, "honest traffic raised \(honest.map { $0.fleet?.reason ?? "" })")

            // A copy of Shire transmits beside the east gateway, 56 m from Shire.
            let shire = venue.shire
            let attacked = try await venue.run(10_121...10_130) { $0 == "east" ? [(shire, -60)] : [] }
            #expect(attacked.count == 1, "\(attacked.map { "\($0.kindName) \($0.fleet?.check.rawValue ?? "")" })")
            let raised = try #require(attacked.first)
            #expect(raised.kindName == "alertRaised")
            #expect(raised.fleet?.check == .outOfCoverage)
            #expect(raised.fleet?.level == .alert)
            #expect(raised.siteID == venue.siteID)
            #expect(raised.label == "Bloomington Office – Conference Room: Shire")
            let reason = raised.fleet?.reason ?? ""
            #expect(reason.contains("fixed beacon Bloomington Office – Conference Room: Shire at (2.0, 4.0) heard by east at -60 dBm"), "\(reason)")
            #expect(reason.contains("east is 56 m away"), "\(reason)")
            // Stamped with the server's clock: the first batch of the attack arrived at 10 121.
            #expect(raised.time == 10_121)
            #expect(raised.fleet?.subject.name == "\(shire.uuid.uuidString):\(shire.major):\(shire.minor)")

            // The same event is on the feed, in the JSON form of the SSE stream.
            try await client.execute(uri: "/v1/events?format=json", method: .get, headers: venue.headers(.readOnly)) { response in
                #expect(response.status == .ok)
                let events = try JSONDecoder().decode([StoredEvent].self, from: Data(buffer: response.body))
                #expect(events.contains { $0.id == raised.id && $0.fleet?.check == .outOfCoverage && $0.kindName == "alertRaised" })
            }
            // And an open alert for the dashboard's fleet page.
            try await client.execute(uri: "/v1/fleet/alerts", method: .get, headers: venue.headers(.readOnly)) { response in
                let alerts = try JSONDecoder().decode(FleetAlertList.self, from: Data(buffer: response.body)).alerts
                #expect(alerts.map(\.check) == [.outOfCoverage])
            }

            // The attack goes on for ten minutes: no second event, although the detector raises
            // it again after its 300 s holdoff.
            let continuing = try await venue.run(10_131...10_700) { $0 == "east" ? [(shire, -60)] : [] }
            #expect(continuing.isEmpty, "\(continuing.map { "\($0.kindName) \($0.fleet?.check.rawValue ?? "")" })")

            // It stops; 900 s after the last raise (at about 10 421) the alert clears, with no batch needed.
            venue.clock.set(10_421 + 899)
            #expect(try await venue.server.evaluateFleet().isEmpty)
            venue.clock.set(10_421 + 901)
            let cleared = try await venue.server.evaluateFleet()
            #expect(cleared.map(\.kindName) == ["alertCleared"])
            #expect(cleared.first?.fleet?.alertID == raised.fleet?.alertID)
            #expect(cleared.first?.fleet?.reason.hasPrefix("not raised again for 900 s") == true)
        }
    }

    @Test func aGatewayWhoseClockLeadsTheServerByMinutesRaisesClockSkewNamingIt() async throws {
        try await Self.withVenue { venue, _ in
            let events = try await venue.run(10_001...10_010, lead: ["west": 120])
            #expect(events.count == 1, "\(events.map { "\($0.kindName) \($0.fleet?.check.rawValue ?? "")" })")
            let raised = try #require(events.first)
            #expect(raised.fleet?.check == .clockSkew)
            #expect(raised.fleet?.subject.kind == "gateway")
            #expect(raised.fleet?.subject.name == "west")
            #expect(raised.label == "west")
            #expect(raised.siteID == venue.siteID)
            #expect(raised.gatewayID == venue.gateways["west"])
            let reason = raised.fleet?.reason ?? ""
            #expect(reason.contains("west's timestamps lead the server's clock by 119"), "\(reason)")
        }
    }

    @Test func theChecksAreOffWithNoSecurityChecks() async throws {
        try await Self.withVenue(securityChecks: false) { venue, _ in
            #expect(venue.server.ingestion.security == nil)
            let shire = venue.shire
            let events = try await venue.run(10_001...10_030, lead: ["west": 120]) { $0 == "east" ? [(shire, -60)] : [] }
            #expect(events.isEmpty)
        }
    }

    @Test func aNewGatewayPositionIsTakenWithoutLosingWhatWasLearnt() async throws {
        try await Self.withVenue { venue, client in
            _ = try await venue.run(10_001...10_060)
            // The east gateway is moved beside Shire: hearing Shire loudly is then honest.
            let moved = Self.mapJSON.replacingOccurrences(of: #"{"x": 58, "y": 5}"#, with: #"{"x": 3, "y": 5}"#)
            try await client.execute(uri: "/v1/sites/\(venue.siteID)/map", method: .put, headers: venue.headers(.admin),
                                     body: ByteBuffer(string: moved)) { #expect($0.status == .ok) }
            let shire = venue.shire
            let events = try await venue.run(10_061...10_090, honest: false) { $0 == "east" ? [(shire, -60)] : [(shire, -62)] }
            #expect(events.isEmpty, "\(events.map { $0.fleet?.reason ?? "" })")
            let counts = try #require(venue.server.ingestion.security?.trackedCounts[venue.siteID])
            #expect(counts.receivers == 2)
        }
    }
}

/// Floods: many sites and many made-up identities keep the server's detectors bounded.
@Suite("Security detectors stay bounded")
struct SecurityTrackingBoundTests {
    @Test func manySitesAndIdentitiesStayWithinTheCaps() async throws {
        var settings = SecurityTracking.serverSettings
        settings.identityCapacity = 200
        settings.receiverCapacity = 20
        let now = 50_000.0
        let tracking = SecurityTracking(settings: settings, siteLimit: 3, clock: { now })
        try await TestBackend.sqlite.withStore { store in
            let organisation = try await store.createOrganisation(name: "Flood", proximityUUIDs: [Fixture.nerderyUUID])
            var gateways: [String] = []
            for index in 0..<8 {
                let site = try await store.createSite(NewSite(organisationID: organisation.id, name: "site \(index)", address: "", planWidth: 50, planHeight: 50))
                gateways.append(try await store.registerGateway(name: "gateway \(index)", siteID: site.id).0.id)
                // Placed, so every unknown identity it hears is traced (and remembered).
                let map = #"{"venue": {"width": 50, "height": 50}, "receivers": [{"name": "gateway \#(index)", "position": {"x": 1, "y": 1}}]}"#
                _ = try await store.setSiteMap(siteID: site.id, document: Data(map.utf8))
            }
            let registry = try await RegistrySnapshots(store: store).current()
            var generator = SystemRandomNumberGenerator()
            for round in 0..<5 {
                for gateway in gateways {
                    let sightings = (0..<1_000).map { _ in
                        Sighting(time: now - 0.5, receiver: "made-up \(round)", address: BluetoothAddress(rawValue: UInt64.random(in: 0...0xFFFF_FFFF_FFFF, using: &generator)), rssi: -70,
                                 frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: UUID(), major: UInt16.random(in: 0...65535, using: &generator),
                                                                                       minor: UInt16.random(in: 0...65535, using: &generator)))))
                    }
                    _ = try await store.database.transaction { db in
                        try await tracking.observe(gatewayID: gateway, sightings: sightings, serverTime: now, registry: registry, db: db)
                    }
                    let counts = tracking.trackedCounts
                    #expect(counts.count <= 3)
                    for site in counts.values {
                        #expect(site.identities <= 200)
                        // The receiver is the posting gateway, whatever name the sightings carry.
                        #expect(site.receivers == 1)
                        #expect(site.phones == 0)
                    }
                }
            }
            // 40,000 random identities through 8 sites: three detectors, each full to its cap.
            #expect(tracking.trackedCounts.count == 3)
            #expect(tracking.trackedCounts.values.allSatisfy { $0.identities >= 150 })
            #expect(tracking.openAlertCount == 0)
        }
    }
}
