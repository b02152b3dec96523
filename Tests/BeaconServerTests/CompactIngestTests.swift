import BeaconGateway
import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `POST /v1/sightings` with the compact body (`application/vnd.proxima.sightings.v1`).
@Suite("Compact ingestion")
struct CompactIngestTests {
    static let mediaType = CompactSightingBatch.mediaType

    func compactBody(_ sightings: [Sighting], sequence: Int? = nil) throws -> ByteBuffer {
        try CompactSightingBatch.encode(SightingBatch(sequence: sequence, sightings: sightings))
    }

    @Test func aCompactBatchDoesWhatTheSameJSONBatchDoes() async throws {
        let replies = try await RouterHarness.with { harness, client in
            var replies: [ProximaServer.IngestReply] = []
            let sightings = [harness.sighting(1), harness.sighting(2), harness.sighting(70)]
            let body = try compactBody(sightings, sequence: 0)
            for _ in 0..<2 {
                try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(.gateway, contentType: Self.mediaType), body: body) { response in
                    #expect(response.status == .accepted, "\(response.text)")
                    replies.append(try response.json(ProximaServer.IngestReply.self))
                }
            }
            try await client.execute(uri: "/v1/events?follow=false", method: .get, headers: harness.headers(.readOnly)) { response in
                let kinds = response.text.split(separator: "\n").filter { $0.hasPrefix("event: ") }
                #expect(kinds == ["event: enter", "event: exit", "event: enter"])
            }
            return replies
        }
        #expect(replies.map(\.accepted) == [3, 0])
        #expect(replies.map(\.events) == [3, 0])
        #expect(replies.map(\.duplicate) == [false, true])
    }

    @Test(arguments: [Role?.none, .readOnly, .operator, .admin, .gateway])
    func onlyAGatewayOrDeviceMayPost(role: Role?) async throws {
        try await RouterHarness.with { harness, client in
            let body = try compactBody([harness.sighting(1)])
            try await client.execute(uri: "/v1/sightings", method: .post, headers: harness.headers(role, contentType: Self.mediaType), body: body) { response in
                switch role {
                case nil: #expect(response.status == .unauthorized)
                case .gateway: #expect(response.status == .accepted)
                default: #expect(response.status == .forbidden)
                }
                if role != .gateway { #expect(response.errorField == "Authorization") }
            }
        }
    }

    @Test func refusalsNameTheFieldAndOffset() async throws {
        try await RouterHarness.with { harness, client in
            let headers = harness.headers(.gateway, contentType: Self.mediaType + "; charset=binary")
            // A future time (the harness clock is at 1,000 s; 5 minutes ahead at most).
            let future = try compactBody([harness.sighting(1), harness.sighting(RouterHarness.now + 301)])
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: future) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "sightings[1].time")
                #expect(response.text.contains("sightings[1].time at offset 64"), "\(response.text)")
            }
            var wrongKind = Array(buffer: try compactBody([harness.sighting(1)]))
            wrongKind[42] = 7
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: ByteBuffer(bytes: wrongKind)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "sightings[0].frame.kind")
                #expect(response.text.contains("at offset 42"))
            }
            // A JSON body sent with the compact type is refused at its first byte.
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: ByteBuffer(string: #"{"sequence":1,"sightings":[]}"#)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "magic")
            }
            let truncated = Array(buffer: try compactBody([harness.sighting(1)])).dropLast(3)
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: ByteBuffer(bytes: truncated)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "sightings[0].frame")
            }
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: ByteBuffer()) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "header")
            }
        }
    }

    @Test func theJSONFormsLimitsHold() async throws {
        var configuration = ServerConfiguration()
        configuration.maxSightingsPerBatch = 10
        configuration.maxBatchBytes = 1024
        try await RouterHarness.with(configuration: configuration) { harness, client in
            let headers = harness.headers(.gateway, contentType: Self.mediaType)
            let tooMany = try compactBody((0..<11).map { harness.sighting(Double($0)) })
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: tooMany) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorField == "sightings")
            }
            var huge = try compactBody([harness.sighting(1)])
            huge.writeBytes([UInt8](repeating: 0, count: 2048))
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: huge) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorField == "body")
            }
            let long = harness.sighting(1)
            var named = long
            named.receiver = String(repeating: "r", count: 201)
            try await client.execute(uri: "/v1/sightings", method: .post, headers: headers, body: try compactBody([long, named])) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "sightings[1].receiver")
            }
        }
    }
}
