import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Treasure hunts through the router: stamps collected from a device's enter events, the
/// walking-speed refusal worded with stamps, time and distance, the time limit, the leaderboard,
/// retried batches, bounds and access.
@Suite("Treasure hunts")
struct HuntAppTests {
    /// Three stamps in the office: A (0, 0), B (40, 0), C (40, 30); 40 m from A to B.
    struct Course {
        var beacons: [Beacon]
        var hunt: Hunt
        var identities: [BeaconIdentity] { beacons.map(\.identity) }
    }

    static func course(_ app: AppsHarness, timeLimit: Double = 600) async throws -> Course {
        let store = app.server.store
        var beacons: [Beacon] = []
        for (label, x, y) in [("Stamp A", 0.0, 0.0), ("Stamp B", 40.0, 0.0), ("Stamp C", 40.0, 30.0)] {
            beacons.append(try await store.addBeacon(NewBeacon(siteID: app.office.site.id, category: 1, label: label,
                                                               position: Position(x: x, y: y), state: .deployed)))
        }
        let zones = try await store.zones(siteID: app.office.site.id)
        let stampZones = beacons.map { beacon in zones.first { $0.minor == beacon.minor }!.id }
        let body = #"{"siteID":\#(app.office.site.id),"name":"Office stamps","stampZoneIDs":\#(stampZones),"timeLimit":\#(timeLimit),"reward":"A mug"}"#
        let response = try await app.call(.post, "/v1/hunts", as: .operator, json: body)
        try #require(response.status == .created, "\(response.status) \(response.text)")
        return Course(beacons: beacons, hunt: try response.json(Hunt.self))
    }

    static func run(_ app: AppsHarness, _ course: Course, device: Device) async throws -> HuntRun? {
        let response = try await app.call(.get, "/v1/devices/\(device.id)/hunts", as: .readOnly)
        try #require(response.status == .ok, "\(response.text)")
        return try response.json([HuntRun].self).first { $0.huntID == course.hunt.id }
    }

    // MARK: The rules alone

    @Test func rulesCollectRefuseExpireAndReward() {
        let hunt = Hunt(id: 1, siteID: 1, name: "h", stampZoneIDs: [10, 11, 12, 13], timeLimit: 600, maxSpeed: 3, stampReach: 10, reward: "mug", createdAt: 0)
        let rules = HuntRules(hunt: hunt, positions: [1: (0, 0), 2: (40, 0), 3: (40, 30), 4: (100, 30)])
        let empty = HuntRun(huntID: 1, deviceID: "d", name: nil, status: .collecting, stamps: [], stampCount: 0, duration: nil, reason: nil,
                            reward: nil, rewardedAt: nil, updatedAt: 0)
        let one = try! #require(rules.collect(1, at: 100, into: empty, now: 5))
        #expect(one.status == .collecting && one.stamps == [HuntRun.Stamp(number: 1, time: 100)])
        #expect(rules.collect(1, at: 150, into: one, now: 6) == nil, "a stamp is collected once")
        // 40 m apart less 2 × 10 m of reach: 20 m, 6.7 s at 3 m/s.
        let tooFast = try! #require(rules.collect(2, at: 102, into: one, now: 7))
        #expect(tooFast.status == .refused)
        #expect(tooFast.reason == "stamps 1→2 in 2 s, 40 m apart (at 3 m/s at most, less 10 m of reach at each stamp, it takes 6.7 s)")
        #expect(rules.collect(3, at: 500, into: tooFast, now: 8) == nil, "a refused run stays refused")
        #expect(rules.collect(2, at: 106.6, into: one, now: 7)?.status == .refused)
        #expect(rules.collect(2, at: 106.7, into: one, now: 7)?.status == .collecting, "exactly walkable is allowed")
        // 30 m apart less the reach is 10 m: 3.3 s.
        let two = try! #require(rules.collect(2, at: 130, into: one, now: 9))
        #expect(rules.collect(3, at: 133, into: two, now: 9)?.status == .refused)
        #expect(rules.collect(3, at: 134, into: two, now: 9)?.status == .collecting)
        let three = try! #require(rules.collect(3, at: 160, into: two, now: 10))
        let late = try! #require(rules.collect(4, at: 701, into: three, now: 11))
        #expect(late.status == .expired && late.reward == nil)
        #expect(late.reason == "time limit of 600 s passed: stamp 4 came 601 s after stamp 1")
        let done = try! #require(rules.collect(4, at: 700, into: three, now: 12))
        #expect(done.status == .finished && done.duration == 600 && done.reward == "mug" && done.rewardedAt == 12)
        #expect(rules.collect(4, at: 710, into: done, now: 13) == nil, "a finished run is never rewarded again")
    }

    // MARK: Through the server

    @Test func anHonestWalkerIsRewardedOnceEvenWhenTheLastBatchIsSentAgain() async throws {
        try await AppsHarness.with { app in
            let course = try await Self.course(app)
            let (device, token) = try await app.register(name: "Ann's phone")
            let start = AppsHarness.monday
            try await app.post(heard: course.identities[0], at: start, token: token, sequence: 1)
            try await app.post(heard: course.identities[1], at: start + 30, token: token, sequence: 2)
            #expect(try await Self.run(app, course, device: device)?.status == .collecting)
            let last = try await app.post(heard: course.identities[2], at: start + 60, token: token, sequence: 3)
            #expect(last.status == .accepted)
            let finished = try #require(try await Self.run(app, course, device: device))
            #expect(finished.status == .finished && finished.stamps.map(\.number) == [1, 2, 3])
            #expect(finished.duration == 60 && finished.reward == "A mug" && finished.rewardedAt == start + 60)

            // The answer was lost; the phone sends the same batch again a minute later.
            let again = try await app.post(heard: course.identities[2], at: start + 120, token: token, sequence: 3)
            #expect(again.status == .accepted && again.text.contains("\"duplicate\":true"), "\(again.text)")
            // And it walks back past every stamp.
            for (index, identity) in course.identities.enumerated() {
                try await app.post(heard: identity, at: start + 300 + Double(index) * 60, token: token, sequence: 10 + index)
            }
            #expect(try await Self.run(app, course, device: device) == finished, "rewarded once, at the first finish")
            let board = try await app.call(.get, "/v1/hunts/\(course.hunt.id)/leaderboard", as: .readOnly).json(HuntLeaderboard.self)
            #expect(board.leaders.map(\.deviceID) == [device.id] && board.leaders.first?.name == "Ann's phone")
            #expect(board.counts["finished"] == 1)
        }
    }

    @Test func aSpooferIsRefusedWithTheStampsTimeAndDistanceAndALateRunExpires() async throws {
        try await AppsHarness.with { app in
            let course = try await Self.course(app)
            let start = AppsHarness.monday
            let (spoofer, spooferToken) = try await app.register(name: "spoofer")
            for (index, identity) in course.identities.enumerated() {
                try await app.post(heard: identity, at: start + 2 * Double(index), token: spooferToken, sequence: index)
            }
            let refused = try #require(try await Self.run(app, course, device: spoofer))
            #expect(refused.status == .refused && refused.reward == nil && refused.stamps.map(\.number) == [1])
            #expect(refused.reason?.hasPrefix("stamps 1→2 in 2 s, 40 m apart") == true, "\(refused.reason ?? "")")

            let (slow, slowToken) = try await app.register(name: nil, anonymous: true)
            try await app.post(heard: course.identities[0], at: start, token: slowToken, sequence: 1)
            try await app.post(heard: course.identities[1], at: start + 100, token: slowToken, sequence: 2)
            try await app.post(heard: course.identities[2], at: start + 700, token: slowToken, sequence: 3)
            let expired = try #require(try await Self.run(app, course, device: slow))
            #expect(expired.status == .expired && expired.name == nil && expired.reason == "time limit of 600 s passed: stamp 3 came 700 s after stamp 1")

            let board = try await app.call(.get, "/v1/hunts/\(course.hunt.id)/leaderboard", as: .readOnly).json(HuntLeaderboard.self)
            #expect(board.leaders.isEmpty && board.counts == ["finished": 0, "collecting": 0, "refused": 1, "expired": 1])
            let refusedRuns = try await app.call(.get, "/v1/hunts/\(course.hunt.id)/runs?status=refused", as: .readOnly).json([HuntRun].self)
            #expect(refusedRuns.map(\.deviceID) == [spoofer.id])
            // Forgetting a device forgets its runs.
            #expect(try await app.call(.delete, "/v1/devices/\(spoofer.id)", as: .operator).status == .noContent)
            let after = try await app.call(.get, "/v1/hunts/\(course.hunt.id)/leaderboard", as: .readOnly).json(HuntLeaderboard.self)
            #expect(after.counts["refused"] == 0)
        }
    }

    @Test func aGatewaysSightingsCollectNothing() async throws {
        try await AppsHarness.with { app in
            let course = try await Self.course(app)
            for (index, identity) in course.identities.enumerated() {
                try await app.post(heard: identity, at: AppsHarness.monday + 60 * Double(index), token: app.tokens[.gateway]!, sequence: index)
            }
            let runs = try await app.call(.get, "/v1/hunts/\(course.hunt.id)/runs", as: .readOnly).json([HuntRun].self)
            #expect(runs.isEmpty)
        }
    }

    // MARK: Bounds and refusals

    @Test func everyRefusedValueNamesItsField() async throws {
        try await AppsHarness.with { app in
            let site = app.office.site.id
            let zone = app.zoneID
            let annex = try await app.server.store.createSite(NewSite(organisationID: app.office.organisation.id, name: "Annex"))
            let annexZone = try await app.server.store.addBeacon(NewBeacon(siteID: annex.id, category: 1, label: "Hall", position: Position(x: 1, y: 1)))
            let annexZoneID = try await app.server.store.zones(siteID: annex.id).first { $0.minor == annexZone.minor }!.id
            /// A valid hunt with some fields replaced.
            func hunt(_ changes: [String: Any] = [:]) throws -> String {
                var object: [String: Any] = ["siteID": site, "name": "h", "stampZoneIDs": [zone], "timeLimit": 600, "reward": "mug"]
                object.merge(changes) { $1 }
                return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            }
            let cases: [(String, HTTPResponse.Status, String)] = [
                (#"{"siteID":\#(site),"name":"h","stampZoneIDs":[\#(zone)],"timeLimit":600}"#, .badRequest, "reward"),
                (#"{"siteID":\#(site),"name":"h","stampZoneIDs":["x"],"timeLimit":600,"reward":"m"}"#, .badRequest, "stampZoneIDs[0]"),
                (try hunt(["name": " "]), .unprocessableContent, "name"),
                (try hunt(["name": "a\u{7}b"]), .unprocessableContent, "name"),
                (try hunt(["reward": ""]), .unprocessableContent, "reward"),
                (try hunt(["stampZoneIDs": [Int]()]), .unprocessableContent, "stampZoneIDs"),
                (try hunt(["stampZoneIDs": [zone, zone]]), .unprocessableContent, "stampZoneIDs[1]"),
                (try hunt(["stampZoneIDs": [zone, 999999]]), .notFound, "stampZoneIDs[1]"),
                (try hunt(["stampZoneIDs": [annexZoneID]]), .unprocessableContent, "stampZoneIDs[0]"),
                (try hunt(["timeLimit": 0]), .unprocessableContent, "timeLimit"),
                (try hunt(["maxSpeed": 40]), .unprocessableContent, "maxSpeed"),
                (try hunt(["stampReach": -1]), .unprocessableContent, "stampReach"),
                (try hunt(["siteID": 999999]), .notFound, "siteID"),
            ]
            for (body, status, field) in cases {
                let response = try await app.call(.post, "/v1/hunts", as: .operator, json: body)
                #expect(response.status == status, "\(body): \(response.status) \(response.text)")
                #expect(response.errorField == field, "\(body): \(response.status) \(response.text)")
            }
            let long = try await app.call(.post, "/v1/hunts", as: .operator, json: try hunt(["stampZoneIDs": Array(1...51)]))
            #expect(long.status == .unprocessableContent && long.errorField == "stampZoneIDs", "\(long.text)")
            let created = try await app.call(.post, "/v1/hunts", as: .operator, json: try hunt())
            let id = try created.json(Hunt.self).id
            for (path, field) in [("/v1/hunts/\(id)/runs?status=won", "status"), ("/v1/hunts/\(id)/runs?limit=0", "limit"),
                                  ("/v1/hunts/\(id)/leaderboard?limit=5000", "limit"), ("/v1/hunts/x", "id"), ("/v1/hunts?site=x", "site")] {
                let response = try await app.call(.get, path, as: .readOnly)
                #expect(response.status == .badRequest && response.errorField == field, "\(path): \(response.text)")
            }
            #expect(try await app.call(.get, "/v1/hunts/999999", as: .readOnly).errorField == "id")
        }
    }

    @Test func aSiteHoldsAtMostFiftyHunts() async throws {
        try await AppsHarness.with { app in
            let body = #"{"siteID":\#(app.office.site.id),"name":"h","stampZoneIDs":[\#(app.zoneID)],"timeLimit":600,"reward":"mug"}"#
            for _ in 0..<HuntLimits().huntsPerSite {
                #expect(try await app.call(.post, "/v1/hunts", as: .operator, json: body).status == .created)
            }
            let refused = try await app.call(.post, "/v1/hunts", as: .operator, json: body)
            #expect(refused.status == .conflict && refused.errorField == "siteID")
        }
    }

    // MARK: Access

    @Test func eachRouteAdmitsTheRightCallersOnly() async throws {
        try await AppsHarness.with { app in
            let course = try await Self.course(app)
            let (own, ownToken) = try await app.register(name: "own")
            let (_, otherToken) = try await app.register(name: "other")
            let annex = try await app.server.store.createSite(NewSite(organisationID: app.office.organisation.id, name: "Annex"))
            let (_, annexToken) = try await app.register(name: "annex phone", siteID: annex.id)
            let id = course.hunt.id
            let newHunt = #"{"siteID":\#(app.office.site.id),"name":"h","stampZoneIDs":[\#(app.zoneID)],"timeLimit":600,"reward":"mug"}"#
            // (method, path, body, allowed tokens, refused tokens with the field named)
            let routes: [(HTTPRequest.Method, String, String?, [String], [(String, String)])] = [
                (.post, "/v1/hunts", newHunt, [app.tokens[.operator]!, app.tokens[.admin]!],
                 [(app.tokens[.readOnly]!, "Authorization"), (app.tokens[.gateway]!, "Authorization"), (ownToken, "Authorization"), (app.tokens[.enrolment]!, "Authorization")]),
                (.get, "/v1/hunts", nil, [app.tokens[.readOnly]!, ownToken],
                 [(app.tokens[.gateway]!, "Authorization"), (app.tokens[.enrolment]!, "Authorization")]),
                (.get, "/v1/hunts?site=\(annex.id)", nil, [app.tokens[.readOnly]!, annexToken], [(ownToken, "site")]),
                (.get, "/v1/hunts/\(id)", nil, [app.tokens[.readOnly]!, ownToken], [(app.tokens[.gateway]!, "Authorization")]),
                (.get, "/v1/hunts/\(id)/leaderboard", nil, [app.tokens[.readOnly]!, ownToken], [(app.tokens[.enrolment]!, "Authorization")]),
                (.get, "/v1/hunts/\(id)/runs", nil, [app.tokens[.readOnly]!], [(ownToken, "Authorization"), (app.tokens[.gateway]!, "Authorization")]),
                (.get, "/v1/devices/\(own.id)/hunts", nil, [app.tokens[.readOnly]!, ownToken], [(otherToken, "id"), (app.tokens[.gateway]!, "Authorization")]),
                (.delete, "/v1/hunts/\(id)", nil, [app.tokens[.operator]!], [(app.tokens[.readOnly]!, "Authorization"), (ownToken, "Authorization")]),
            ]
            for (method, path, body, allowed, refused) in routes {
                let anonymous = try await app.call(method, path, json: body)
                #expect(anonymous.status == .unauthorized && anonymous.errorField == "Authorization", "\(method) \(path)")
                for (token, field) in refused {
                    let response = try await app.call(method, path, token: token, json: body)
                    #expect(response.status == .forbidden && response.errorField == field, "\(method) \(path): \(response.status) \(response.text)")
                }
                for token in allowed {
                    let response = try await app.call(method, path, token: token, json: body)
                    #expect((200..<300).contains(response.status.code), "\(method) \(path): \(response.status) \(response.text)")
                }
            }
        }
    }

    /// Whether a hunt exists shows only to those who may read it: no token gets 401 and a role
    /// that may not read hunts 403 before any lookup, and a device of another site gets the 404
    /// a missing hunt gets (before, an existing hunt answered 401 or 403 where a missing one
    /// answered 404).
    @Test func aHuntsExistenceShowsToNoOneWhoMayNotReadIt() async throws {
        try await AppsHarness.with { app in
            let course = try await Self.course(app)
            let annex = try await app.server.store.createSite(NewSite(organisationID: app.office.organisation.id, name: "Annex"))
            let (_, annexToken) = try await app.register(name: "annex phone", siteID: annex.id)
            let missing = course.hunt.id + 1000
            for suffix in ["", "/leaderboard"] {
                var answers: [String: [String]] = [:]
                for id in [course.hunt.id, missing] {
                    let path = "/v1/hunts/\(id)" + suffix
                    let anonymous = try await app.call(.get, path)
                    let gateway = try await app.call(.get, path, token: app.tokens[.gateway]!)
                    let otherSite = try await app.call(.get, path, token: annexToken)
                    #expect(anonymous.status == .unauthorized && anonymous.errorField == "Authorization", "\(path): \(anonymous.status)")
                    #expect(gateway.status == .forbidden && gateway.errorField == "Authorization", "\(path): \(gateway.status)")
                    #expect(otherSite.status == .notFound && otherSite.errorField == "id", "\(path): \(otherSite.status)")
                    #expect(otherSite.text.contains("no hunt \(id)"), "\(path): \(otherSite.text)")
                    answers[path] = ["\(anonymous.status.code)", "\(gateway.status.code)", "\(otherSite.status.code)"]
                }
                #expect(answers["/v1/hunts/\(course.hunt.id)" + suffix] == answers["/v1/hunts/\(missing)" + suffix])
            }
        }
    }

    @Test func aDeviceSeesOnlyItsOwnNameOnTheLeaderboard() async throws {
        try await AppsHarness.with { app in
            let course = try await Self.course(app)
            var tokens: [String] = []
            for name in ["Ann", "Bob"] {
                let (_, token) = try await app.register(name: name)
                for (index, identity) in course.identities.enumerated() {
                    try await app.post(heard: identity, at: AppsHarness.monday + 60 * Double(index), token: token, sequence: index)
                }
                tokens.append(token)
            }
            let staff = try await app.call(.get, "/v1/hunts/\(course.hunt.id)/leaderboard", as: .readOnly).json(HuntLeaderboard.self)
            #expect(Set(staff.leaders.compactMap(\.name)) == ["Ann", "Bob"])
            let ann = try await app.call(.get, "/v1/hunts/\(course.hunt.id)/leaderboard", token: tokens[0]).json(HuntLeaderboard.self)
            #expect(ann.leaders.compactMap(\.name) == ["Ann"] && ann.leaders.count == 2)
        }
    }

    /// Every hunt route and schema is in /openapi.yaml as the server sends and requires it.
    @Test func openAPIDocumentsTheHuntRoutes() throws {
        let document = ProximaServer.openAPIDocument
        for path in ["/v1/hunts", "/v1/hunts/{id}", "/v1/hunts/{id}/leaderboard", "/v1/hunts/{id}/runs", "/v1/devices/{id}/hunts"] {
            #expect(document.contains("\n  \(path):\n"), "missing \(path)")
        }
        let hunt = Hunt(id: 1, siteID: 1, name: "h", stampZoneIDs: [1], timeLimit: 1, maxSpeed: 3, stampReach: 10, reward: "r", createdAt: 1)
        let run = HuntRun(huntID: 1, deviceID: "d", name: nil, status: .collecting, stamps: [], stampCount: 0, duration: nil, reason: nil,
                          reward: nil, rewardedAt: nil, updatedAt: 1)
        let leader = HuntLeader(rank: 1, deviceID: "d", name: nil, duration: 1, rewardedAt: 1)
        let answers: [(String, any Encodable)] = [
            ("Hunt", hunt), ("HuntRun", run), ("HuntRunStamp", HuntRun.Stamp(number: 1, time: 1)), ("HuntLeader", leader),
            ("HuntLeaderboard", HuntLeaderboard(huntID: 1, leaders: [], counts: [:])),
        ]
        for (name, value) in answers {
            let schema = try OpenAPIContractTests.Schema(named: name, in: document)
            let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
            #expect(Set(object.keys) == schema.required, "\(name): carries \(object.keys.sorted()), documents \(schema.required.sorted())")
        }
        let complete = #"{"siteID":1,"name":"h","stampZoneIDs":[1],"timeLimit":1,"maxSpeed":3,"stampReach":10,"reward":"r"}"#
        let schema = try OpenAPIContractTests.Schema(named: "NewHunt", in: document)
        let object = try #require(JSONSerialization.jsonObject(with: Data(complete.utf8)) as? [String: Any])
        #expect(Set(object.keys) == schema.properties)
        for key in object.keys {
            var partial = object
            partial.removeValue(forKey: key)
            let fails = (try? JSONDecoder().decode(NewHunt.self, from: JSONSerialization.data(withJSONObject: partial))) == nil
            #expect(fails == schema.required.contains(key), "NewHunt.\(key)")
        }
    }
}
