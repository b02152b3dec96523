import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("HTTP API")
struct APITests {
    @Test func sightingsBatchProducesEventsOnTheStream() async throws {
        try await RouterHarness.with { harness, client in
            let body = try harness.batchBody([harness.sighting(1), harness.sighting(2), harness.sighting(70)], sequence: 0)
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: body) { response in
                #expect(response.status == .accepted)
                let reply = try response.json(ProximaServer.IngestReply.self)
                #expect(reply.accepted == 3)
                #expect(reply.events == 3)
            }
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: body) { response in
                let decoded = try response.json(ProximaServer.IngestReply.self)
                #expect(decoded.duplicate)
            }
            try await client.execute(uri: "/v1/events?follow=false", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.headers[.contentType] == "text/event-stream")
                let kinds = response.text.split(separator: "\n").filter { $0.hasPrefix("event: ") }
                #expect(kinds == ["event: enter", "event: exit", "event: enter"])
                #expect(response.text.contains("Bloomington Office – Conference Room: Mordor"))
            }
            var jsonHeaders = harness.headers(.readOnly)
            jsonHeaders[.accept] = "application/json"
            try await client.execute(uri: "/v1/events?after=1", method: .get, headers: jsonHeaders) { response in
                let events = try response.json([StoredEvent].self)
                #expect(events.map(\.id) == [2, 3])
            }
            let site = harness.office.site.id
            try await client.execute(uri: "/v1/events?site=\(site + 1)", method: .get, headers: jsonHeaders) { response in
                let decoded = try response.json([StoredEvent].self)
                #expect(decoded.isEmpty)
            }
            let region = "\(Fixture.nerderyUUID.uuidString):1:1001"
            try await client.execute(uri: "/v1/events?site=\(site)&region=\(region)", method: .get, headers: jsonHeaders) { response in
                let decoded = try response.json([StoredEvent].self)
                #expect(decoded.count == 3)
            }
            try await client.execute(uri: "/v1/events?region=\(Fixture.nerderyUUID.uuidString):2", method: .get, headers: jsonHeaders) { response in
                let decoded = try response.json([StoredEvent].self)
                #expect(decoded.isEmpty)
            }
            try await client.execute(uri: "/v1/events?region=nonsense", method: .get, headers: jsonHeaders) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "region")
            }
            try await client.execute(uri: "/v1/ranging?gateway=\(harness.gatewayID)", method: .get, headers: jsonHeaders) { response in
                let ranging = try response.json([RangingRecord].self)
                #expect(ranging.count == 1)
                #expect(ranging.first?.proximity == "near")
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.text.contains("proxima_sightings_ingested_total 3"))
                #expect(response.text.contains("proxima_batches_duplicate_total 1"))
            }
        }
    }

    struct BadField: Sendable, CustomTestStringConvertible {
        var json: String
        var field: String
        var status: Int = 400
        var testDescription: String { field }
    }

    static let frame = #""frame":{"format":"iBeacon","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":1001,"measuredPower":-59}"#
    static let badFields: [BadField] = [
        BadField(json: "not json", field: "body"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":300,\#(frame)}]}"#, field: "sightings[0].rssi"),
        BadField(json: #"{"sightings":[{"time":-1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-60,\#(frame)}]}"#, field: "sightings[0].time"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"nope","rssi":-60,\#(frame)}]}"#, field: "sightings[0].address"),
        BadField(json: #"{"sightings":[{"time":1,"address":"AA:BB:CC:DD:EE:FF","rssi":-60,\#(frame)}]}"#, field: "sightings[0].receiver"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-60,"frame":{"format":"iBeacon","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":70000,"minor":1,"measuredPower":-59}}]}"#, field: "sightings[0].frame.major"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-60,"frame":{"format":"iBeacon","uuid":"zz","major":1,"minor":1,"measuredPower":-59}}]}"#, field: "sightings[0].frame.uuid"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-60,"frame":{"format":"wifi"}}]}"#, field: "sightings[0].frame.format"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":127,\#(frame)}]}"#, field: "sightings[0].rssi"),
        // One range on every form, the controller's (the edge form's readings already held to it).
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":50,\#(frame)}]}"#, field: "sightings[0].rssi"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":21,\#(frame)}]}"#, field: "sightings[0].rssi"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-128,\#(frame)}]}"#, field: "sightings[0].rssi"),
        BadField(json: #"{"sightings":"many"}"#, field: "sightings"),
        BadField(json: #"{"sequence":-3,"sightings":[]}"#, field: "sequence"),
        // Issue 9, item 11: a sequence no later batch can exceed, a time past 2^53 s that hung
        // the server, and one in the year 3000 that dated every later enter there.
        BadField(json: #"{"sequence":9223372036854775807,"sightings":[]}"#, field: "sequence"),
        // Past Int's range, or not an integer: the decoder names no field, the diagnosis does.
        BadField(json: #"{"sequence":9223372036854775808,"sightings":[]}"#, field: "sequence"),
        BadField(json: #"{"sequence":1.5,"sightings":[]}"#, field: "sequence"),
        BadField(json: #"{"sightings":[{"time":1,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-60,\#(frame)},{"time":1e16,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-60,\#(frame)}]}"#, field: "sightings[1].time"),
        BadField(json: #"{"sightings":[{"time":32503680000,"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-60,\#(frame)}]}"#, field: "sightings[0].time"),
        BadField(json: #"{"sightings":[{"time":\#(RouterHarness.now + 301),"receiver":"r","address":"AA:BB:CC:DD:EE:FF","rssi":-60,\#(frame)}]}"#, field: "sightings[0].time"),
    ]

    @Test(arguments: badFields)
    func eachBadFieldIsNamed(bad: BadField) async throws {
        try await RouterHarness.with { harness, client in
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: ByteBuffer(string: bad.json)) { response in
                #expect(Int(response.status.code) == bad.status)
                #expect(response.errorField == bad.field, "\(response.text)")
            }
        }
    }

    /// A body that says it is not JSON is refused as such (before, text/plain was parsed as JSON
    /// and application/xml got 400); one that says nothing is read as JSON.
    @Test func aContentTypeThatIsNotJSONIsRefusedWith415() async throws {
        try await RouterHarness.with { harness, client in
            let body = try harness.batchBody([harness.sighting(RouterHarness.now)], sequence: 1)
            for contentType in ["text/plain", "application/xml; charset=utf-8", "application/x-www-form-urlencoded"] {
                try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway, contentType: contentType), body: body) { response in
                    #expect(response.status == .unsupportedMediaType, "\(contentType): \(response.status)")
                    #expect(response.errorField == "Content-Type")
                }
            }
            var bare = harness.headers(.gateway)
            bare[.contentType] = nil
            try await client.execute(uri: "/v1/sightings", method: .post, headers: bare, body: body) { response in
                #expect(response.status == .accepted, "\(response.text)")
            }
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway, contentType: "Application/JSON; charset=utf-8"), body: body) { response in
                #expect(response.status == .accepted && response.text.contains("\"duplicate\":true"), "\(response.text)")
            }
        }
    }

    /// Issue 9, item 11: one batch with the largest sequence made every later batch a
    /// "duplicate". Now a retry is a batch whose sequence is among the last 64, so the next
    /// batches count, and a retry of them is still recognised.
    @Test func noSequenceLocksAGatewayOut() async throws {
        try await RouterHarness.with { harness, client in
            for (sequence, duplicate) in [(SightingBatch.maximumSequence, false), (5, false), (6, false), (5, true), (SightingBatch.maximumSequence, true)] {
                let body = try harness.batchBody([harness.sighting(Double(10 + sequence % 100))], sequence: sequence)
                try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: body) { response in
                    #expect(response.status == .accepted)
                    let reply = try response.json(ProximaServer.IngestReply.self)
                    #expect(reply.duplicate == duplicate, "sequence \(sequence)")
                }
            }
        }
    }

    /// Issue 9, item 11: a sighting in the year 3000 was accepted and dated every later enter
    /// of the gateway in the year 3000. It is refused, and the gateway's next enter keeps its time.
    @Test func aSightingFromTheFutureDoesNotMoveTheGatewaysClock() async throws {
        try await RouterHarness.with { harness, client in
            let future = try harness.batchBody([harness.sighting(32_503_680_000)], sequence: 1)
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: future) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "sightings[0].time")
            }
            let now = try harness.batchBody([harness.sighting(900), harness.sighting(901)], sequence: 2)
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: now) { response in
                #expect(response.status == .accepted)
            }
            var headers = harness.headers(.readOnly)
            headers[.accept] = "application/json"
            try await client.execute(uri: "/v1/events?after=0", method: .get, headers: headers) { response in
                let events = try response.json([StoredEvent].self)
                #expect(events.map(\.time) == [900])
            }
        }
    }

    /// Beacons a gateway forgets to stay within its limit, and sightings of new ones it had no
    /// room for (all tracked beacons present), are counted in /metrics.
    @Test func forgottenBeaconsAreCounted() async throws {
        var configuration = ServerConfiguration()
        configuration.gatewayBeaconLimit = 8
        try await RouterHarness.with(configuration: configuration) { harness, client in
            let sightings = (0..<40).map { (index: Int) in
                harness.sighting(Double(100 + 5 * index), identity: BeaconIdentity(uuid: Fixture.nerderyUUID, major: 9, minor: UInt16(index)))
            }
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: try harness.batchBody(sightings, sequence: 1)) { response in
                #expect(response.status == .accepted)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                func counter(_ name: String) -> Int {
                    let line = response.text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
                    return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
                }
                let forgotten = counter("proxima_gateway_beacons_forgotten_total")
                let untracked = counter("proxima_sightings_untracked_total")
                #expect(forgotten > 0)
                // Each of the 40 identities is still tracked (at most 8), forgotten or never tracked.
                #expect(forgotten + untracked >= 32, "\(response.text)")
            }
        }
    }

    @Test func oversizedBatchesAndFloodsAreRefused() async throws {
        var configuration = ServerConfiguration()
        configuration.maxSightingsPerBatch = 10
        configuration.maxBatchBytes = 64 * 1024
        configuration.batchesPerSecond = 0.001
        configuration.batchBurst = 3
        try await RouterHarness.with(configuration: configuration) { harness, client in
            let tooMany = try harness.batchBody((0..<11).map { harness.sighting(Double($0)) })
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: tooMany) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorField == "sightings")
            }
            let huge = ByteBuffer(string: #"{"sightings":[], "padding":""# + String(repeating: "x", count: 70 * 1024) + "\"}")
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: huge) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorField == "body")
            }
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: ByteBuffer(string: #"{"sightings":[]}"#)) { response in
                #expect(response.status == .accepted)
            }
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway), body: ByteBuffer(string: #"{"sightings":[]}"#)) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.errorField == "rate")
                #expect(response.headers[.retryAfter] != nil)
            }
        }
    }

    @Test func registryWorkflowOverHTTP() async throws {
        try await RouterHarness.with { harness, client in
            let site = harness.office.site.id
            try await client.execute(uri: "/v1/sites/\(site)/plan?format=advertise", method: .post, headers: harness.headers(.operator, contentType: "text/csv"),
                                     body: ByteBuffer(string: "category,label,x,y\n4,Entrance,1,2\n4,Till,3,4\n")) { response in
                #expect(response.status == .created)
                let lines = response.text.split(separator: "\n")
                #expect(lines == [
                    "proxima advertise --uuid E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 --major 1 --minor 4001 --power -59",
                    "proxima advertise --uuid E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 --major 1 --minor 4002 --power -59",
                ])
            }
            try await client.execute(uri: "/v1/sites/\(site)/plan?format=hcitool", method: .post, headers: harness.headers(.operator, contentType: "text/csv"),
                                     body: ByteBuffer(string: "category,label,x,y\n4,Exit,1,2\n")) { response in
                // 4003 = 0x0FA3; -59 dBm = 0xC5.
                #expect(response.text.contains("hcitool -i hci0 cmd 0x08 0x0008 1e 02 01 1a 1a ff 4c 00 02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 0f a3 c5 00 &&"))
            }
            try await client.execute(uri: "/v1/sites/\(site)/plan?format=csv", method: .post, headers: harness.headers(.operator, contentType: "text/csv"),
                                     body: ByteBuffer(string: "category,label,x\n4,Broken,1\n")) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "line 1")
            }
            try await client.execute(uri: "/v1/sites/\(site)/plan?format=csv", method: .post, headers: harness.headers(.operator, contentType: "text/csv"),
                                     body: ByteBuffer(string: "category,label,x,y\n4,Broken,one,2\n")) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "line 2, column x")
            }
            try await client.execute(uri: "/v1/resolve?uuid=\(Fixture.nerderyUUID.uuidString)&major=1&minor=4002", method: .get, headers: harness.headers(.readOnly)) { response in
                let decoded = try response.json(ResolvedIdentity.self)
                #expect(decoded.label == "Bloomington Office – Till")
            }
            try await client.execute(uri: "/v1/resolve?uuid=\(Fixture.nerderyUUID.uuidString)&major=70000&minor=1", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "major")
            }
            try await client.execute(uri: "/v1/beacons/999", method: .patch, headers: harness.headers(.operator), body: ByteBuffer(string: #"{"state":"deployed"}"#)) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/v1/beacons/1", method: .patch, headers: harness.headers(.operator), body: ByteBuffer(string: #"{"state":"lost"}"#)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "state")
            }
            try await client.execute(uri: "/v1/organisations/\(harness.office.organisation.id.uuidString)/directory?format=csv", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.text.hasPrefix("uuid,major,site,address,plan_width,plan_height,minor,category,category_name,label,x,y\n"))
                #expect(response.text.contains(",1,Bloomington Office,\"9555 James Ave S, Bloomington, MN\",60,40,1001,1,Conference Room,Mordor,12,8\n"))
            }
            try await client.execute(uri: "/v1/gateways", method: .post, headers: harness.headers(.admin), body: ByteBuffer(string: #"{"name":"till"}"#)) { response in
                #expect(response.status == .created)
                struct Registered: Decodable { var token: String }
                let token = try response.json(Registered.self).token
                #expect(try await harness.server.store.authenticate(token: token)?.role == .gateway)
            }
            try await client.execute(uri: "/v1/tokens", method: .post, headers: harness.headers(.admin), body: ByteBuffer(string: #"{"name":"x","role":"gateway"}"#)) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == "role")
            }
        }
    }
}
