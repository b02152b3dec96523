import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Help requests through the router with a moved clock: a visitor's phone files, a helper's
/// phone acknowledges and ranges the visitor's beacon until immediate, then marks it done; the
/// streams, metrics, bounds and the numbering plan's major 999.
@Suite("Help requests")
struct HelpRequestTests {
    /// The visitor's phone, a helper's phone (made a helper of the office) and their tokens.
    struct People {
        var visitor: Device
        var visitorToken: String
        var helper: Device
        var helperToken: String
    }

    static func people(_ harness: AppsHarness, helperPositions: Bool = false) async throws -> People {
        let (visitor, visitorToken) = try await harness.register(name: "Ann's phone")
        let (helper, helperToken) = try await harness.register(name: "Bob (help desk)", positions: helperPositions)
        let made = try await harness.call(.put, "/v1/help-helpers/\(helper.id)", as: .operator)
        try #require(made.status == .ok, "\(made.status) \(made.text)")
        return People(visitor: visitor, visitorToken: visitorToken, helper: helper, helperToken: helperToken)
    }

    /// Five packets of a beacon at one RSSI, the last at `time`.
    @discardableResult
    static func post(_ harness: AppsHarness, heard identity: BeaconIdentity, rssi: Int8, at time: Double, token: String, sequence: Int? = nil) async throws -> TestResponse {
        harness.clock.set(time)
        let sightings = (0..<5).map { step in
            Sighting(time: time - Double(4 - step) * 0.2, receiver: "phone", address: BluetoothAddress("AA:BB:CC:DD:EE:02")!, rssi: rssi,
                     frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))))
        }
        let body = String(decoding: try JSONEncoder().encode(SightingBatch(sequence: sequence, sightings: sightings)), as: UTF8.self)
        let response = try await harness.call(.post, "/v1/sightings", token: token, json: body)
        try #require(response.status.code / 100 == 2, "\(response.status) \(response.text)")
        return response
    }

    static func file(_ harness: AppsHarness, token: String, minor: Int, name: String = "Ann") async throws -> HelpRequest {
        let response = try await harness.call(.post, "/v1/help-requests", token: token, json: #"{"name":"\#(name)","minor":\#(minor)}"#)
        try #require(response.status == .created, "\(response.status) \(response.text)")
        return try response.json(HelpRequest.self)
    }

    static func changes(_ harness: AppsHarness, path: String, token: String) async throws -> [HelpRequestChange] {
        let response = try await harness.call(.get, path + (path.contains("?") ? "&" : "?") + "follow=false", token: token)
        try #require(response.status == .ok, "\(response.status) \(response.text)")
        return response.text.components(separatedBy: "\n").filter { $0.hasPrefix("data: ") }.compactMap {
            try? JSONDecoder().decode(HelpRequestChange.self, from: Data($0.dropFirst(6).utf8))
        }
    }

    @Test func filedAcknowledgedRangedReachedAndDone() async throws {
        try await AppsHarness.with { harness in
            let people = try await Self.people(harness)
            let start = AppsHarness.monday
            // The visitor's phone heard Mordor last: the request is filed with it, and it is the room.
            try await Self.post(harness, heard: harness.mordor, rssi: -62, at: start, token: people.visitorToken)
            harness.clock.set(start + 1)
            let filed = try await Self.file(harness, token: people.visitorToken, minor: 4242)
            #expect(filed.state == .open)
            #expect(filed.beacon == HelpBeacon(uuid: harness.office.site.uuid, major: 999, minor: 4242))
            #expect(filed.nearest?.identity == harness.mordor)
            #expect(filed.nearest?.label?.contains("Mordor") == true)
            #expect(filed.room == filed.nearest?.label)
            #expect(filed.deviceID == people.visitor.id && filed.name == "Ann")

            // Staff and the helper see the queue; it is the helper's site.
            let queue = try await harness.call(.get, "/v1/help-requests?state=open", token: people.helperToken)
            #expect(try queue.json([HelpRequest].self).map(\.id) == [filed.id])

            harness.clock.set(start + 31)
            let acknowledged = try await harness.call(.post, "/v1/help-requests/\(filed.id)/acknowledge", token: people.helperToken)
            try #require(acknowledged.status == .ok, "\(acknowledged.text)")
            let ack = try acknowledged.json(HelpRequest.self)
            #expect(ack.state == .acknowledged && ack.acknowledgedAt == start + 31)
            #expect(ack.helper == HelpHelper(id: "device-\(people.helper.id)", name: "Bob (help desk)", deviceID: people.helper.id))
            let again = try await harness.call(.post, "/v1/help-requests/\(filed.id)/acknowledge", as: .operator)
            #expect(again.status == .conflict && again.errorField == "state")

            // The helper's phone ranges the visitor's beacon as it walks up: far, nearer, immediate.
            var distances: [Double] = []
            for (step, rssi) in [Int8(-80), -74, -68].enumerated() {
                try await Self.post(harness, heard: filed.beacon.identity, rssi: rssi, at: start + 33 + Double(step) * 2, token: people.helperToken)
                let now = try await harness.call(.get, "/v1/help-requests/\(filed.id)", token: people.visitorToken).json(HelpRequest.self)
                #expect(now.state == .acknowledged)
                distances.append(try #require(now.helperDistance?.distance))
            }
            #expect(distances == distances.sorted(by: >) && Set(distances).count == 3, "\(distances)")
            try await Self.post(harness, heard: filed.beacon.identity, rssi: -30, at: start + 45, token: people.helperToken)
            let reached = try await harness.call(.get, "/v1/help-requests/\(filed.id)", as: .readOnly).json(HelpRequest.self)
            #expect(reached.state == .reached && reached.reachedBy == "ranging" && reached.reachedAt == start + 45)
            #expect(reached.helperDistance?.proximity == "immediate")

            harness.clock.set(start + 50)
            let done = try await harness.call(.post, "/v1/help-requests/\(filed.id)/done", token: people.helperToken)
            #expect(try done.json(HelpRequest.self).state == .done)

            // The visitor's stream: every state; distances are dropped once the request is finished.
            let kinds = try await Self.changes(harness, path: "/v1/help-requests/\(filed.id)/events", token: people.visitorToken).map(\.kind)
            #expect(kinds == ["filed", "acknowledged", "reached", "done"])

            let metrics = try await harness.call(.get, "/v1/help-requests/metrics", as: .readOnly).json(HelpRequestMetrics.self)
            let site = try #require(metrics.sites.first)
            #expect(site.filed == 1 && site.acknowledged == 1 && site.reached == 1 && site.done == 1 && site.cancelled == 0)
            #expect(site.meanSecondsToAcknowledge == 30 && site.meanSecondsToReach == 14 && site.successRate == 1)
            #expect(metrics.helpers.map(\.helper?.deviceID) == [people.helper.id])
            let prometheus = try await harness.call(.get, "/metrics").text
            #expect(prometheus.contains(#"proxima_help_acknowledge_seconds_mean{site="\#(harness.office.site.id)"} 30"#), "\(prometheus)")
            #expect(prometheus.contains(#"proxima_help_requests{site="\#(harness.office.site.id)",outcome="done"} 1"#))
        }
    }

    @Test func thePhonesNearestBeaconFollowsItsConsent() async throws {
        try await AppsHarness.with { harness in
            let start = AppsHarness.monday
            let other = BeaconIdentity(uuid: harness.mordor.uuid, major: harness.mordor.major, minor: 1500)
            // Sharing positions: the loudest fixed beacon of the latest batch, whether or not it entered.
            let (_, sharing) = try await harness.register(name: "sharing", positions: true)
            try await Self.post(harness, heard: harness.mordor, rssi: -80, at: start, token: sharing, sequence: 1)
            try await Self.post(harness, heard: other, rssi: -50, at: start + 1, token: sharing, sequence: 2)
            #expect(try await Self.file(harness, token: sharing, minor: 1).nearest?.identity == other)
            // Events only: the beacon it entered last; no signal strength is kept for it.
            let (eventsOnly, token) = try await harness.register(name: "events only")
            try await Self.post(harness, heard: harness.mordor, rssi: -80, at: start + 2, token: token, sequence: 1)
            let filed = try await Self.file(harness, token: token, minor: 2)
            #expect(filed.nearest?.identity == harness.mordor)
            let rssi = try await harness.store.database.read { db in
                try await db.raw("SELECT rssi FROM help_device_nearest WHERE device_id = \(bind: eventsOnly.id)").first()?.double("rssi")
            }
            #expect(rssi == 0)
        }
    }

    @Test func distancesWhileRangingStreamOncePerSecondAndRetriedBatchesCountOnce() async throws {
        try await AppsHarness.with { harness in
            let people = try await Self.people(harness)
            let start = AppsHarness.monday
            harness.clock.set(start)
            let filed = try await Self.file(harness, token: people.visitorToken, minor: 7)
            _ = try await harness.call(.post, "/v1/help-requests/\(filed.id)/acknowledge", token: people.helperToken)
            // Twice the same batch (a retry), then a batch half a second later: one distance change.
            try await Self.post(harness, heard: filed.beacon.identity, rssi: -80, at: start + 2, token: people.helperToken, sequence: 1)
            let retried = try await Self.post(harness, heard: filed.beacon.identity, rssi: -80, at: start + 2, token: people.helperToken, sequence: 1)
            #expect(retried.text.contains(#""duplicate":true"#), "\(retried.text)")
            try await Self.post(harness, heard: filed.beacon.identity, rssi: -79, at: start + 2.5, token: people.helperToken, sequence: 2)
            try await Self.post(harness, heard: filed.beacon.identity, rssi: -78, at: start + 3.5, token: people.helperToken, sequence: 3)
            let kinds = try await Self.changes(harness, path: "/v1/help-requests/events?site=\(harness.office.site.id)&after=0", token: harness.tokens[.readOnly]!).map(\.kind)
            #expect(kinds == ["filed", "acknowledged", "distance", "distance"])
            // Without `after`, the queue's stream starts at its newest change: nothing to replay.
            #expect(try await Self.changes(harness, path: "/v1/help-requests/events?site=\(harness.office.site.id)", token: harness.tokens[.readOnly]!).isEmpty)
            // Staff may mark it done; reaching is counted with it when no ranging said immediate.
            let done = try await harness.call(.post, "/v1/help-requests/\(filed.id)/done", as: .operator).json(HelpRequest.self)
            #expect(done.state == .done && done.reachedBy == "helper" && done.helper?.deviceID == people.helper.id)
        }
    }

    @Test func minorsOfLiveRequestsAreUniqueAndAskingAgainReplacesTheRequest() async throws {
        try await AppsHarness.with { harness in
            let people = try await Self.people(harness)
            let (_, otherToken) = try await harness.register(name: "Cy's phone")
            let first = try await Self.file(harness, token: people.visitorToken, minor: 100)
            let clash = try await harness.call(.post, "/v1/help-requests", token: otherToken, json: #"{"minor":100}"#)
            #expect(clash.status == .conflict && clash.errorField == "minor")
            let second = try await Self.file(harness, token: people.visitorToken, minor: 101)
            #expect(try await harness.store.helpRequest(id: first.id).state == .cancelled)
            // The first's minor is free again.
            _ = try await Self.file(harness, token: otherToken, minor: 100)
            let cancelled = try await harness.call(.post, "/v1/help-requests/\(second.id)/cancel", token: people.visitorToken)
            #expect(try cancelled.json(HelpRequest.self).state == .cancelled)
            let twice = try await harness.call(.post, "/v1/help-requests/\(second.id)/cancel", token: people.visitorToken)
            #expect(twice.status == .conflict && twice.errorField == "state")
            let metrics = try await harness.store.helpMetrics(siteID: harness.office.site.id)
            #expect(metrics.sites.first?.filed == 3 && metrics.sites.first?.cancelled == 2 && metrics.sites.first?.successRate == 0)
        }
    }

    @Test(arguments: [
        (#"{"minor":70000}"#, "minor"), (#"{"name":"a\u0001b","minor":1}"#, "name"), (#"{"minor":"x"}"#, "minor"),
        (#"{"name":"\#(String(repeating: "n", count: 101))","minor":1}"#, "name"),
    ])
    func refusedBodiesNameTheirField(body: String, field: String) async throws {
        try await AppsHarness.with { harness in
            let (_, token) = try await harness.register()
            let response = try await harness.call(.post, "/v1/help-requests", token: token, json: body)
            #expect([.badRequest, .unprocessableContent].contains(response.status))
            #expect(response.errorField == field, "\(response.text)")
        }
    }

    @Test func refusedQueriesNameTheirField() async throws {
        try await AppsHarness.with { harness in
            for (path, field) in [("/v1/help-requests?state=lost", "state"), ("/v1/help-requests?limit=0", "limit"),
                                  ("/v1/help-requests?site=x", "site"), ("/v1/help-requests/x", "id"),
                                  ("/v1/help-requests/999999", "id"), ("/v1/help-requests/events?after=-1", "after")] {
                let response = try await harness.call(.get, path, as: .readOnly)
                #expect(response.status.code >= 400 && response.errorField == field, "\(path): \(response.text)")
            }
        }
    }

    @Test func theNumberingPlanKeepsMajor999ForHelpRequests() async throws {
        let plan = NumberingPlan()
        #expect(try plan.nextMajor(used: Set((1...998).map(UInt16.init)), uuid: "U") == 1000)
        try await AppsHarness.with { harness in
            let body = #"{"organisationID":"\#(harness.office.organisation.id.uuidString)","name":"Help desk","major":999}"#
            let refused = try await harness.call(.post, "/v1/sites", as: .operator, json: body)
            #expect(refused.status == .unprocessableContent && refused.errorField == "major", "\(refused.text)")
            let directory = Directory(organisation: harness.office.organisation, categories: [:], locations: [
                Directory.Location(uuid: harness.office.site.uuid, major: 999, name: "Help", address: "", planWidth: 1, planHeight: 1, minors: []),
            ])
            await #expect { try await harness.store.importDirectory(directory) } throws: { error in
                (error as? RegistryError)?.field == "locations[0].major"
            }
        }
    }
}

extension AppsHarness {
    var store: Store { server.store }
}
