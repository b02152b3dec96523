import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Offers through the router: a device near several zones with offers is offered the choice
/// among them, ranked by proximity and accuracy, not only the nearest; the per-device rate limit
/// refuses and counts the rest; bounds and access.
@Suite("Offers")
struct OfferAppTests {
    struct Stands {
        /// Mordor (the office fixture's zone) and stands B, C and D, each with one offer.
        var beacons: [String: Beacon]
        var offers: [String: Offer]
    }

    static func stands(_ app: AppsHarness) async throws -> Stands {
        var beacons = ["Mordor": app.office.mordor]
        for (label, x) in [("Stand B", 20.0), ("Stand C", 30.0), ("Stand D", 40.0)] {
            beacons[label] = try await app.server.store.addBeacon(NewBeacon(siteID: app.office.site.id, category: 1, label: label,
                                                                           position: Position(x: x, y: 8), state: .deployed))
        }
        let zones = try await app.server.store.zones(siteID: app.office.site.id)
        var offers: [String: Offer] = [:]
        for (label, beacon) in beacons {
            let zone = try #require(zones.first { $0.minor == beacon.minor })
            let body = #"{"zoneID":\#(zone.id),"title":"\#(label) deal","body":"10 % off at \#(label)"}"#
            let response = try await app.call(.post, "/v1/offers", as: .operator, json: body)
            try #require(response.status == .created, "\(response.text)")
            offers[label] = try response.json(Offer.self)
        }
        return Stands(beacons: beacons, offers: offers)
    }

    /// Three seconds of packets from each beacon at its RSSI, ten a second, ending at `time`
    /// (whole ranging cycles, so the engine reports readings).
    @discardableResult
    static func post(_ app: AppsHarness, _ stands: Stands, rssi: [String: Double], at time: Double, token: String, sequence: Int) async throws -> TestResponse {
        app.clock.set(time)
        var sightings: [Sighting] = []
        for step in 0..<30 {
            for (label, value) in rssi.sorted(by: { $0.key < $1.key }) {
                let beacon = stands.beacons[label]!
                sightings.append(Sighting(time: time - 2.9 + Double(step) * 0.1, receiver: "phone",
                                          address: BluetoothAddress("AA:BB:CC:DD:EE:\(String(format: "%02X", beacon.minor % 256))")!, rssi: Int8(value),
                                          frame: .iBeacon(IBeaconFrame(identity: beacon.identity, measuredPower: MeasuredPower(-59)))))
            }
        }
        sightings.sort { $0.time < $1.time }
        let body = String(decoding: try JSONEncoder().encode(SightingBatch(sequence: sequence, sightings: sightings)), as: UTF8.self)
        let response = try await app.call(.post, "/v1/sightings", token: token, json: body)
        try #require(response.status == .accepted, "\(response.text)")
        return response
    }

    static func offers(_ app: AppsHarness, device: Device, token: String) async throws -> DeviceOffers {
        let response = try await app.call(.get, "/v1/devices/\(device.id)/offers", token: token)
        try #require(response.status == .ok, "\(response.text)")
        return try response.json(DeviceOffers.self)
    }

    @Test func rankingKeepsEveryNearChoiceInOrderOfProximityThenAccuracy() {
        func option(_ id: Int, _ proximity: String, _ accuracy: Double) -> OfferOption {
            OfferOption(offerID: id, zoneID: id, label: "z\(id)", title: "t", body: "b", proximity: proximity, accuracy: accuracy)
        }
        let settings = OfferSettings(perWindow: 3, window: 600, reach: 5, maxChoices: 3, freshness: 10)
        let candidates = [option(1, "near", 2.5), option(2, "immediate", 0.4), option(3, "near", 1.2), option(4, "far", 4.9),
                          option(5, "far", 7), option(6, "unknown", 0.1)]
        #expect(OfferRanking.choices(candidates, settings: settings).map(\.offerID) == [2, 3, 1])
        var wide = settings
        wide.maxChoices = 10
        #expect(OfferRanking.choices(candidates, settings: wide).map(\.offerID) == [2, 3, 1, 4], "beyond reach and unknown are left out")
        #expect(OfferRanking.key(OfferRanking.choices(candidates, settings: settings)) == "1,2,3")
    }

    @Test func aDeviceNearSeveralStandsIsOfferedTheRankedChoiceAmongThem() async throws {
        try await AppsHarness.with { app in
            let stands = try await Self.stands(app)
            let (device, token) = try await app.register(name: "Ann's phone", positions: true)
            let start = AppsHarness.monday
            try await Self.post(app, stands, rssi: ["Stand B": -60, "Mordor": -64, "Stand C": -68, "Stand D": -90], at: start, token: token, sequence: 1)
            let first = try await Self.offers(app, device: device, token: token)
            #expect(first.delivered == 1 && first.refused == 0 && first.deliveries.count == 1)
            let choices = try #require(first.deliveries.first).choices
            #expect(Set(choices.map(\.offerID)) == Set(["Stand B", "Mordor", "Stand C"].map { stands.offers[$0]!.id }),
                    "three near stands are a choice of three, D (far beyond 5 m) is not: \(choices.map { ($0.label, $0.proximity, $0.accuracy) })")
            let ranks = choices.map { (OfferRanking.proximityRank($0.proximity), $0.accuracy) }
            #expect(zip(ranks, ranks.dropFirst()).allSatisfy { $0 <= $1 }, "ranked by proximity, then accuracy: \(ranks)")
            #expect(choices.first?.offerID == stands.offers["Stand B"]!.id)

            // Still there 20 s later: the same choice is not offered again.
            try await Self.post(app, stands, rssi: ["Stand B": -60, "Mordor": -64, "Stand C": -68], at: start + 20, token: token, sequence: 2)
            #expect(try await Self.offers(app, device: device, token: token).delivered == 1)
            // A resent batch is a duplicate and changes nothing.
            try await Self.post(app, stands, rssi: ["Stand D": -60], at: start + 40, token: token, sequence: 2)
            #expect(try await Self.offers(app, device: device, token: token).delivered == 1)

            // The delivery is an event on the stream, once, with the choice in its order.
            let stream = try await app.call(.get, "/v1/events?follow=false", as: .readOnly).text
            #expect(stream.components(separatedBy: "event: offersDelivered\n").count - 1 == 1, "\(stream)")
            let listed = try await app.call(.get, "/v1/events?format=json&limit=1000", as: .readOnly).json([StoredEvent].self)
            let delivered = listed.compactMap(\.application).filter { $0.kind == .offersDelivered }
            #expect(delivered.count == 1)
            #expect(delivered.first?.device == device.id)
            #expect(delivered.first?.offers?.map(\.offerID) == choices.map(\.offerID))
        }
    }

    @Test func thePerDeviceRateLimitRefusesAndCountsTheRest() async throws {
        try await AppsHarness.with { app in
            let stands = try await Self.stands(app)
            let site = app.office.site.id
            let set = try await app.call(.put, "/v1/offer-settings/\(site)", as: .operator,
                                         json: #"{"perWindow":2,"window":600,"reach":5,"maxChoices":3,"freshness":10}"#)
            #expect(set.status == .ok, "\(set.text)")
            let (device, token) = try await app.register(name: "Ann's phone", positions: true)
            let (other, otherToken) = try await app.register(name: "Bob's phone", positions: true)
            let start = AppsHarness.monday
            // Four different stands 20 s apart: two offered, two refused.
            for (index, stand) in ["Stand B", "Stand C", "Stand D", "Mordor"].enumerated() {
                try await Self.post(app, stands, rssi: [stand: -60], at: start + 20 * Double(index), token: token, sequence: index)
            }
            var counts = try await Self.offers(app, device: device, token: token)
            #expect(counts.delivered == 2 && counts.refused == 2)
            #expect(counts.deliveries.map { $0.choices.map(\.label) }.flatMap { $0 }.count == 2)
            // Another device has its own allowance.
            try await Self.post(app, stands, rssi: ["Stand B": -60], at: start + 60, token: otherToken, sequence: 1)
            #expect(try await Self.offers(app, device: other, token: otherToken).delivered == 1)
            // After the window, offers come again.
            try await Self.post(app, stands, rssi: ["Stand B": -60], at: start + 700, token: token, sequence: 10)
            counts = try await Self.offers(app, device: device, token: token)
            #expect(counts.delivered == 3 && counts.refused == 2 && counts.deliveries.first?.choices.first?.label.contains("Stand B") == true)
            let siteCounts = try await app.call(.get, "/v1/offer-settings/\(site)", as: .readOnly).json(SiteOfferSettings.self)
            #expect(siteCounts.delivered == 4)
            #expect(siteCounts.refused == 2)
            #expect(siteCounts.settings.perWindow == 2)
        }
    }

    @Test func aDeviceThatDidNotConsentToPositionsIsOfferedNothing() async throws {
        try await AppsHarness.with { app in
            let stands = try await Self.stands(app)
            let (device, token) = try await app.register(name: "private phone", positions: false)
            try await Self.post(app, stands, rssi: ["Stand B": -60, "Mordor": -64], at: AppsHarness.monday, token: token, sequence: 1)
            #expect(try await Self.offers(app, device: device, token: token) == DeviceOffers(deliveries: [], delivered: 0, refused: 0))
            let listed = try await app.call(.get, "/v1/events?format=json&limit=1000", as: .readOnly).json([StoredEvent].self)
            #expect(!listed.contains { $0.application != nil }, "an offer event for a device that did not consent: \(listed)")
        }
    }

    @Test func everyRefusedValueNamesItsField() async throws {
        try await AppsHarness.with { app in
            let zone = app.zoneID
            let offerCases: [(String, HTTPResponse.Status, String)] = [
                (#"{"zoneID":\#(zone),"title":"t"}"#, .badRequest, "body"),
                (#"{"zoneID":"x","title":"t","body":"b"}"#, .badRequest, "zoneID"),
                (#"{"zoneID":\#(zone),"title":" ","body":"b"}"#, .unprocessableContent, "title"),
                (#"{"zoneID":\#(zone),"title":"t","body":"a\u0007"}"#, .unprocessableContent, "body"),
                (#"{"zoneID":\#(zone),"title":"t","body":"\#(String(repeating: "x", count: 1001))"}"#, .unprocessableContent, "body"),
                (#"{"zoneID":999999,"title":"t","body":"b"}"#, .notFound, "zoneID"),
            ]
            for (body, status, field) in offerCases {
                let response = try await app.call(.post, "/v1/offers", as: .operator, json: body)
                #expect(response.status == status && response.errorField == field, "\(body.prefix(80)): \(response.status) \(response.text)")
            }
            let good = #"{"zoneID":\#(zone),"title":"t","body":"b"}"#
            for _ in 0..<OfferLimits().offersPerZone {
                #expect(try await app.call(.post, "/v1/offers", as: .operator, json: good).status == .created)
            }
            let full = try await app.call(.post, "/v1/offers", as: .operator, json: good)
            #expect(full.status == .conflict && full.errorField == "zoneID")
            let site = app.office.site.id
            let settingsCases: [(String, String)] = [
                (#""perWindow":0"#, "perWindow"), (#""window":0"#, "window"), (#""reach":0"#, "reach"),
                (#""maxChoices":11"#, "maxChoices"), (#""freshness":1000"#, "freshness"),
            ]
            let valid = ["perWindow": "3", "window": "600", "reach": "5", "maxChoices": "3", "freshness": "10"]
            for (change, field) in settingsCases {
                var object = valid
                let parts = change.split(separator: ":")
                object[String(parts[0].dropFirst().dropLast())] = String(parts[1])
                let body = "{" + object.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
                let response = try await app.call(.put, "/v1/offer-settings/\(site)", as: .operator, json: body)
                #expect(response.status == .unprocessableContent && response.errorField == field, "\(body): \(response.text)")
            }
            let missing = try await app.call(.put, "/v1/offer-settings/\(site)", as: .operator, json: #"{"perWindow":3}"#)
            #expect(missing.status == .badRequest && missing.errorField == "window", "\(missing.text)")
            #expect(try await app.call(.get, "/v1/offer-settings/999999", as: .readOnly).errorField == "siteID")
            #expect(try await app.call(.get, "/v1/offers?zone=x", as: .readOnly).errorField == "zone")
        }
    }

    @Test func eachRouteAdmitsTheRightCallersOnly() async throws {
        try await AppsHarness.with { app in
            let (own, ownToken) = try await app.register(name: "own", positions: true)
            let (_, otherToken) = try await app.register(name: "other")
            let body = #"{"zoneID":\#(app.zoneID),"title":"t","body":"b"}"#
            let created = try await app.call(.post, "/v1/offers", as: .operator, json: body)
            let id = try created.json(Offer.self).id
            let site = app.office.site.id
            let settings = #"{"perWindow":3,"window":600,"reach":5,"maxChoices":3,"freshness":10}"#
            let operators = [app.tokens[.operator]!, app.tokens[.admin]!]
            let notOperators = [app.tokens[.readOnly]!, app.tokens[.gateway]!, app.tokens[.enrolment]!, ownToken]
            let notReaders = [app.tokens[.gateway]!, app.tokens[.enrolment]!, ownToken]
            let routes: [(HTTPRequest.Method, String, String?, [String], [(String, String)])] = [
                (.post, "/v1/offers", body, operators, notOperators.map { ($0, "Authorization") }),
                (.get, "/v1/offers", nil, [app.tokens[.readOnly]!], notReaders.map { ($0, "Authorization") }),
                (.get, "/v1/offers/\(id)", nil, [app.tokens[.readOnly]!], notReaders.map { ($0, "Authorization") }),
                (.put, "/v1/offers/\(id)", body, operators, notOperators.map { ($0, "Authorization") }),
                (.get, "/v1/offer-settings/\(site)", nil, [app.tokens[.readOnly]!], notReaders.map { ($0, "Authorization") }),
                (.put, "/v1/offer-settings/\(site)", settings, operators, notOperators.map { ($0, "Authorization") }),
                (.get, "/v1/devices/\(own.id)/offers", nil, [app.tokens[.readOnly]!, ownToken],
                 [(otherToken, "id"), (app.tokens[.gateway]!, "Authorization"), (app.tokens[.enrolment]!, "Authorization")]),
                (.delete, "/v1/offers/\(id)", nil, [app.tokens[.operator]!], notOperators.map { ($0, "Authorization") }),
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

    @Test func openAPIDocumentsTheOfferRoutes() throws {
        let document = ProximaServer.openAPIDocument
        for path in ["/v1/offers", "/v1/offers/{id}", "/v1/offer-settings/{site}", "/v1/devices/{id}/offers"] {
            #expect(document.contains("\n  \(path):\n"), "missing \(path)")
        }
        let option = OfferOption(offerID: 1, zoneID: 1, label: "l", title: "t", body: "b", proximity: "near", accuracy: 1)
        let answers: [(String, any Encodable)] = [
            ("Offer", Offer(id: 1, siteID: 1, zoneID: 1, title: "t", body: "b", createdAt: 1, updatedAt: 1)),
            ("OfferSettings", OfferSettings.standard),
            ("SiteOfferSettings", SiteOfferSettings(siteID: 1, settings: .standard, delivered: 0, refused: 0)),
            ("OfferOption", option),
            ("OfferDelivery", OfferDelivery(id: 1, time: 1, choices: [option])),
            ("DeviceOffers", DeviceOffers(deliveries: [], delivered: 0, refused: 0)),
        ]
        for (name, value) in answers {
            let schema = try OpenAPIContractTests.Schema(named: name, in: document)
            let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
            #expect(Set(object.keys) == schema.required, "\(name): carries \(object.keys.sorted()), documents \(schema.required.sorted())")
        }
        let requests: [(String, String, @Sendable (Data) throws -> Void)] = [
            ("NewOffer", #"{"zoneID":1,"title":"t","body":"b"}"#, { _ = try JSONDecoder().decode(NewOffer.self, from: $0) }),
            ("OfferSettings", #"{"perWindow":1,"window":1,"reach":1,"maxChoices":1,"freshness":1}"#, { _ = try JSONDecoder().decode(OfferSettings.self, from: $0) }),
        ]
        for (name, complete, decode) in requests {
            let schema = try OpenAPIContractTests.Schema(named: name, in: document)
            let object = try #require(JSONSerialization.jsonObject(with: Data(complete.utf8)) as? [String: Any])
            #expect(Set(object.keys) == schema.properties)
            for key in object.keys {
                var partial = object
                partial.removeValue(forKey: key)
                let fails = (try? decode(JSONSerialization.data(withJSONObject: partial))) == nil
                #expect(fails == schema.required.contains(key), "\(name).\(key)")
            }
        }
    }
}
