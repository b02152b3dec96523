@testable import BeaconGateway
import BeaconKit
@testable import BeaconServer
import BeaconSimulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Edge mode (issue 19, item 3): a gateway that runs the server's engine itself and posts its
/// results gives the server the same events and ranging state as posting every sighting.
@Suite("Edge batches")
struct EdgeBatchTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("examples")

    /// The busiest receiver's sightings of a scenario, in batches as a gateway would post them.
    static func batches(_ file: String, seconds: Double, batchSize: Int) throws -> [SightingBatch] {
        var scenario = try Scenario.load(contentsOf: examples.appendingPathComponent(file))
        scenario.duration = seconds
        var simulation = Simulation(scenario: scenario)
        let sightings = simulation.run().map(\.sighting)
        let busiest = Dictionary(grouping: sightings, by: \.receiver).max { $0.value.count < $1.value.count }!.value
        return stride(from: 0, to: busiest.count, by: batchSize).enumerated().map { index, start in
            SightingBatch(sequence: index + 1, sightings: Array(busiest[start..<min(start + batchSize, busiest.count)]))
        }
    }

    struct Outcome: Equatable {
        var events: [String]
        var ranging: [String]
        var bytes: Int
    }

    enum Mode {
        case central
        /// Every step's results posted under its batch's sequence.
        case edgeEveryBatch
        /// As `proxima gateway --edge` posts: changes with the next batch, readings alone when
        /// held this many seconds of sighting time (``EdgeSummaryHold``), the rest at the end.
        case edgeHeld(Double)
    }

    /// Posts the batches centrally or as edge batches and reads back what the server kept,
    /// without the gateway's id (each run registers its own gateway).
    static func run(_ batches: [SightingBatch], mode: Mode) async throws -> Outcome {
        try await RouterHarness.with { harness, client in
            var monitor = GatewayMonitor(settings: GatewaySettings())
            var hold = EdgeSummaryHold(settings: GatewaySettings(), readingInterval: 10)
            var bytes = 0
            func post(_ body: ByteBuffer, contentType: String) async throws {
                bytes += body.readableBytes
                try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway, contentType: contentType), body: body) { response in
                    #expect(response.status == .accepted, "\(response.text)")
                }
            }
            for batch in batches {
                switch mode {
                case .central:
                    try await post(try CompactSightingBatch.encode(batch), contentType: CompactSightingBatch.mediaType)
                case .edgeEveryBatch:
                    let outcome = monitor.step(batch, now: RouterHarness.now)
                    let summary = EdgeBatch(sequence: batch.sequence!, settings: GatewaySettings(), sightings: batch.sightings.count, outcome: outcome)
                    // The compact form, as `proxima gateway --edge` posts it.
                    try await post(try #require(CompactEdgeBatch.encode(summary)), contentType: CompactEdgeBatch.mediaType)
                case .edgeHeld(let interval):
                    if hold.readingInterval != interval { hold = EdgeSummaryHold(settings: GatewaySettings(), readingInterval: interval) }
                    let now = batch.sightings.last?.time ?? 0
                    hold.add(monitor.step(batch, now: RouterHarness.now), sightings: batch.sightings.count, now: now)
                    if hold.isDue(at: now) {
                        try await post(try #require(CompactEdgeBatch.encode(hold.take(sequence: batch.sequence!))), contentType: CompactEdgeBatch.mediaType)
                    }
                }
            }
            if hold.isHolding {
                try await post(try #require(CompactEdgeBatch.encode(hold.take(sequence: batches.count + 1))), contentType: CompactEdgeBatch.mediaType)
            }
            var json = harness.headers(.readOnly)
            json[.accept] = "application/json"
            let events = try await client.execute(uri: "/v1/events?format=json&limit=1000", method: .get, headers: json) { response in
                // Region events: fleet checks read the sightings themselves, which an edge
                // gateway keeps (docs/server.md says what edge mode leaves out).
                try response.json([StoredEvent].self).filter { ["enter", "exit"].contains($0.kindName) }.map { event -> String in
                    var anonymous = event
                    anonymous.gatewayID = ""
                    return String(decoding: try JSONEncoder.sorted.encode(anonymous), as: UTF8.self)
                }
            }
            let ranging = try await client.execute(uri: "/v1/ranging?gateway=\(harness.gatewayID)", method: .get, headers: json) { response in
                try response.json([RangingRecord].self).map { record -> String in
                    var anonymous = record
                    anonymous.gatewayID = ""
                    return String(decoding: try JSONEncoder.sorted.encode(anonymous), as: UTF8.self)
                }.sorted()
            }
            return Outcome(events: events, ranging: ranging, bytes: bytes)
        }
    }

    @Test(arguments: ["retail.json", "museum.json"])
    func edgeResultsEqualCentralProcessing(file: String) async throws {
        let batches = try Self.batches(file, seconds: 900, batchSize: 200)
        let central = try await Self.run(batches, mode: .central)
        let edge = try await Self.run(batches, mode: .edgeEveryBatch)
        let held = try await Self.run(batches, mode: .edgeHeld(10))
        #expect(!central.events.isEmpty && !central.ranging.isEmpty, "the scenario made no events or ranging state")
        #expect(edge.events == central.events)
        #expect(edge.ranging == central.ranging)
        #expect(held.events == central.events)
        #expect(held.ranging == central.ranging)
        #expect(held.bytes < edge.bytes, "holding readings should send fewer bytes: \(held.bytes) against \(edge.bytes)")
        let sightings = batches.reduce(0) { $0 + $1.sightings.count }
        print("edge \(file): \(sightings) sightings in \(batches.count) batches, \(central.events.count) events; compact \(central.bytes) bytes, edge \(edge.bytes) bytes (\(String(format: "%.1f", Double(central.bytes) / Double(edge.bytes)))× less), held readings \(held.bytes) bytes")
    }

    @Test func heldResultsGoUpWithTheNextChangeOrWhenTheReadingIntervalEnds() {
        let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
        func reading(_ rssi: Double, at time: Double) -> GatewayMonitor.Reading {
            GatewayMonitor.Reading(identity: identity, rssi: rssi, distance: 1, proximity: "near", time: time)
        }
        var hold = EdgeSummaryHold(settings: GatewaySettings(), readingInterval: 10)
        #expect(!hold.isHolding && !hold.isDue(at: 0))
        var step = GatewayMonitor.StepOutcome(duplicate: false)
        step.readings = [reading(-60, at: 100)]
        hold.add(step, sightings: 5, now: 100)
        #expect(hold.isHolding && !hold.isDue(at: 109.9) && hold.isDue(at: 110))
        step.readings = [reading(-70, at: 101)]
        hold.add(step, sightings: 3, now: 101)
        #expect(!hold.isDue(at: 101), "readings alone wait for the interval")
        var change = GatewayMonitor.StepOutcome(duplicate: false)
        change.changes = [GatewayMonitor.Change(identity: identity, transition: .exit, time: 102)]
        hold.add(change, sightings: 1, now: 102)
        #expect(hold.isDue(at: 102), "an exit goes up at once")
        hold.add(GatewayMonitor.StepOutcome(duplicate: true), sightings: 50, now: 102)
        let batch = hold.take(sequence: 9)
        #expect(batch.sequence == 9 && batch.sightings == 9, "a duplicate step adds nothing")
        #expect(batch.readings.count == 1 && batch.readings.first?.rssi == -70 && batch.readings.first?.time == 101, "only the latest reading of a beacon")
        #expect(batch.changes.map(\.transition) == ["exit"])
        #expect(!hold.isHolding)
    }

    @Test func theCompactFormCarriesExactlyTheJSONFormsValues() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let batch = EdgeBatch(sequence: 42, settings: .init(GatewaySettings()), sightings: 17, changes: [
            .init(uuid: uuid, major: 1, minor: 2, transition: "enter", time: 1_700_000_000.123456789),
            .init(uuid: uuid, major: 1, minor: 3, transition: "exit", time: 0.1 + 0.2),
        ], readings: [
            .init(uuid: uuid, major: 1, minor: 2, rssi: -67, distance: 1.0 / 3, proximity: "near", time: 1_700_000_000.5),
            .init(uuid: uuid, major: 1, minor: 3, rssi: -90, distance: nil, proximity: "unknown", time: 12),
        ])
        let bytes = try #require(CompactEdgeBatch.encode(batch))
        // Two identities (20 bytes each), two changes (11), two readings (20), a 32-byte header.
        #expect(bytes.readableBytes == 32 + 40 + 22 + 40)
        let (decoded, digest) = try CompactEdgeBatch.decode(bytes)
        #expect(digest == batch.settings.digest)
        #expect(decoded.sequence == 42 && decoded.sightings == 17 && decoded.changes == batch.changes && decoded.readings == batch.readings)
        // A reading whose RSSI is not a whole dBm goes as JSON instead.
        var fractional = batch
        fractional.readings[0].rssi = -67.5
        #expect(CompactEdgeBatch.encode(fractional) == nil)

        // Hostile bytes: each refusal names its field and offset, nothing traps.
        var truncated = bytes
        truncated.moveWriterIndex(to: bytes.writerIndex - 1)
        #expect(throws: EdgeBatch.Refusal.self) { try CompactEdgeBatch.decode(truncated) }
        var badIndex = bytes
        badIndex.setInteger(UInt16(9), at: 32 + 40)
        do {
            _ = try CompactEdgeBatch.decode(badIndex)
            Issue.record("an identity index past the table was taken")
        } catch {
            #expect(error.field == "changes[0].identity" && error.reason.contains("offset 72"), "\(error)")
        }
        var badMagic = bytes
        badMagic.setInteger(UInt8(0), at: 0)
        #expect(throws: EdgeBatch.Refusal.self) { try CompactEdgeBatch.decode(badMagic) }
        for length in 0..<bytes.readableBytes {
            var prefix = bytes
            prefix.moveWriterIndex(to: length)
            #expect(throws: EdgeBatch.Refusal.self) { try CompactEdgeBatch.decode(prefix) }
        }
    }

    @Test func aRetriedEdgeBatchIsStoredOnce() async throws {
        try await RouterHarness.with { harness, client in
            var monitor = GatewayMonitor(settings: GatewaySettings())
            let batch = SightingBatch(sequence: 7, sightings: [harness.sighting(1), harness.sighting(2)])
            let body = ByteBuffer(data: try JSONEncoder().encode(EdgeBatch(sequence: 7, settings: GatewaySettings(), sightings: 2,
                                                                           outcome: monitor.step(batch, now: RouterHarness.now))))
            let headers = harness.headers(.gateway, contentType: EdgeBatch.mediaType)
            for expectDuplicate in [false, true] {
                try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: body) { response in
                    #expect(response.status == .accepted)
                    let reply = try response.json(ProximaServer.IngestReply.self)
                    #expect(reply.duplicate == expectDuplicate && reply.events == (expectDuplicate ? 0 : 1), "\(reply)")
                }
            }
        }
    }

    @Test func refusalsNameTheField() async throws {
        try await RouterHarness.with { harness, client in
            func post(_ json: String, role: Role? = .gateway) async throws -> (HTTPResponse.Status, String?) {
                try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(role, contentType: EdgeBatch.mediaType),
                                         body: ByteBuffer(string: json)) { ($0.status, $0.errorField) }
            }
            let rule = EdgeBatch.Settings(GatewaySettings()).exitRule
            let settings = "\"settings\":{\"exitRule\":\"\(rule)\",\"beaconLimit\":10000}"
            let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
            let answer1 = try await post("{\"sequence\":1,\(settings),\"sightings\":0,\"changes\":[],\"readings\":[]}", role: nil)
            #expect(answer1.0 == .unauthorized)
            let answer2 = try await post("{\"sequence\":1,\(settings),\"sightings\":0,\"changes\":[],\"readings\":[]}", role: .readOnly)
            #expect(answer2 == (.forbidden, "Authorization"))
            let answer3 = try await post("{\"sequence\":1,\"settings\":{\"exitRule\":\"ios\",\"beaconLimit\":10000},\"sightings\":0,\"changes\":[],\"readings\":[]}")
            #expect(answer3
                    == (.conflict, "settings.exitRule"))
            let answer4 = try await post("{\"sequence\":1,\"settings\":{\"exitRule\":\"\(rule)\",\"beaconLimit\":5},\"sightings\":0,\"changes\":[],\"readings\":[]}")
            #expect(answer4
                    == (.conflict, "settings.beaconLimit"))
            let change = "{\"uuid\":\"\(uuid)\",\"major\":1,\"minor\":2,\"transition\":\"arrive\",\"time\":5}"
            let answer5 = try await post("{\"sequence\":1,\(settings),\"sightings\":1,\"changes\":[\(change)],\"readings\":[]}")
            #expect(answer5
                    == (.unprocessableContent, "changes[0].transition"))
            let late = "{\"uuid\":\"\(uuid)\",\"major\":1,\"minor\":2,\"transition\":\"enter\",\"time\":9e12}"
            let answer6 = try await post("{\"sequence\":1,\(settings),\"sightings\":1,\"changes\":[\(late)],\"readings\":[]}")
            #expect(answer6
                    == (.unprocessableContent, "changes[0].time"))
            let reading = "{\"uuid\":\"\(uuid)\",\"major\":1,\"minor\":2,\"rssi\":-60,\"distance\":1,\"proximity\":\"close\",\"time\":5}"
            let answer7 = try await post("{\"sequence\":1,\(settings),\"sightings\":1,\"changes\":[],\"readings\":[\(reading)]}")
            #expect(answer7
                    == (.unprocessableContent, "readings[0].proximity"))
            var otherSettings = GatewaySettings()
            otherSettings.beaconLimit = 5
            let compact = try #require(CompactEdgeBatch.encode(EdgeBatch(sequence: 1, settings: .init(otherSettings), sightings: 0, changes: [], readings: [])))
            let compactAnswer = try await client.execute(uri: "/v1/sightings", method: .post,
                                                         headers: harness.headers(.gateway, contentType: CompactEdgeBatch.mediaType), body: compact) { ($0.status, $0.errorField) }
            #expect(compactAnswer == (.conflict, "settings"))
            let answer8 = try await post("")
            #expect(answer8.1 == "body")
            let answer9 = try await post("{\"sequence\":1,\(settings),\"sightings\":0,\"changes\":[]}")
            #expect(answer9.0 == .badRequest)
            // The consumed count is bounded by what the compact form holds (one token once pushed the counter by 2^62),
            // and an out-of-range sequence or count names its field, not the body.
            for (body, expected) in [("{\"sequence\":1,\(settings),\"sightings\":4611686018427387904,\"changes\":[],\"readings\":[]}", (HTTPResponse.Status.unprocessableContent, "sightings")),
                                     ("{\"sequence\":1,\(settings),\"sightings\":4294967296,\"changes\":[],\"readings\":[]}", (.unprocessableContent, "sightings")),
                                     ("{\"sequence\":1,\(settings),\"sightings\":1e30,\"changes\":[],\"readings\":[]}", (.badRequest, "sightings")),
                                     ("{\"sequence\":9223372036854775808,\(settings),\"sightings\":0,\"changes\":[],\"readings\":[]}", (.badRequest, "sequence")),
                                     ("{\"sequence\":1.5,\(settings),\"sightings\":0,\"changes\":[],\"readings\":[]}", (.badRequest, "sequence"))] {
                let answer = try await post(body)
                #expect(answer == expected, "\(body.prefix(60)): \(answer)")
            }
            // One post covers every batch held over --edge-interval: more than one batch's 5,000.
            let counted = try await post("{\"sequence\":2,\(settings),\"sightings\":30000,\"changes\":[],\"readings\":[]}")
            #expect(counted.0 == .accepted)
            // The documented name of the server's rule (the default, evidence) is its rule, in any
            // case; so is the engine's own description, which older gateways send.
            #expect(rule == "evidence")
            for (sequence, name) in [(3, "evidence"), (4, "Evidence"), (5, String(describing: GatewaySettings().exitRule))] {
                let named = try await post("{\"sequence\":\(sequence),\"settings\":{\"exitRule\":\"\(name)\",\"beaconLimit\":10000},\"sightings\":0,\"changes\":[],\"readings\":[]}")
                #expect(named.0 == .accepted, "\(name): \(named)")
            }
            let fixed = try await post("{\"sequence\":6,\"settings\":{\"exitRule\":\"10\",\"beaconLimit\":10000},\"sightings\":0,\"changes\":[],\"readings\":[]}")
            #expect(fixed == (.conflict, "settings.exitRule"))
        }
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
