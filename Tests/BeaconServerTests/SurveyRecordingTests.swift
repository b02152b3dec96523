import BeaconKit
import BeaconLocate
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Survey scans recorded on the server: a tag or a phone held at a spot, what the site heard of
/// it, saved into the map's `tagSurvey` or `survey`.
@Suite("Survey recordings")
struct SurveyRecordingTests {
    typealias Recording = SurveyRecorder.Recording

    static func body(subject: String, x: Double, y: Double, seconds: Double? = 3) -> ByteBuffer {
        var text = #"{"subject": "\#(subject)", "position": {"x": \#(x), "y": \#(y)}"#
        if let seconds { text += #", "seconds": \#(seconds)"# }
        return ByteBuffer(string: text + "}")
    }

    static func record(_ site: PositionTests.Site, _ client: any TestClientProtocol, subject: String, x: Double, y: Double,
                       seconds: Double = 3) async throws -> Recording {
        try await client.execute(uri: "/v1/sites/\(site.siteID)/survey-recordings", method: .post, headers: site.harness.headers(.operator),
                                 body: body(subject: subject, x: x, y: y, seconds: seconds)) { response in
            #expect(response.status == .created, "\(response.text)")
            return try response.json(Recording.self)
        }
    }

    static func recordings(_ site: PositionTests.Site, _ client: any TestClientProtocol) async throws -> [Recording] {
        try await client.execute(uri: "/v1/sites/\(site.siteID)/survey-recordings", method: .get, headers: site.harness.headers(.readOnly)) { response in
            #expect(response.status == .ok, "\(response.text)")
            return try response.json(SurveyRecorder.Listing.self).recordings
        }
    }

    static func save(_ site: PositionTests.Site, _ client: any TestClientProtocol) async throws -> SurveyRecorder.Saved {
        try await client.execute(uri: "/v1/sites/\(site.siteID)/survey-recordings/save", method: .post, headers: site.harness.headers(.operator)) { response in
            #expect(response.status == .ok, "\(response.text)")
            return try response.json(SurveyRecorder.Saved.self)
        }
    }

    static func storedMap(_ site: PositionTests.Site, _ client: any TestClientProtocol) async throws -> SiteMap {
        try await client.execute(uri: "/v1/sites/\(site.siteID)/map", method: .get, headers: site.harness.headers(.readOnly)) { response in
            try SiteMap.decode(Data(buffer: response.body))
        }
    }

    @Test func aTagHeldAtASpotBecomesAScanOfTheMapsTagSurvey() async throws {
        try await PositionTests.withSite { site, client in
            let tag = site.harness.office.mordor.identity
            let spot = Position(x: 15, y: 5)
            let asked = try await Self.record(site, client, subject: TrackedSubject.beacon(tag).name, x: spot.x, y: spot.y)
            #expect(asked.kind == .tag && asked.status == .waiting, "no sighting yet: it starts with the site's next batch")
            // The tag is elsewhere before the window and after it: only the window's packets count.
            try await site.run(100...103, carried: (tag, { $0 < 103.5 ? spot : Position(x: 3, y: 3) }), carriedThroughWalls: false)
            #expect(try await Self.recordings(site, client).first?.status == .recording)
            // The room-only scanner and a phone hear the tag in its window too: neither has a place among the anchors.
            for gateway in ["scanner-east", "phone-anna"] {
                site.sequence += 1
                _ = try await site.harness.server.accept(SightingBatch(sequence: site.sequence, sightings: [PositionTests.sighting(101.1, gateway, tag, rssi: -50)]),
                                                         gatewayID: site.gateways[gateway]!)
            }
            try await site.run(104...107, carried: (tag, { _ in Position(x: 3, y: 3) }), carriedThroughWalls: false)
            let done = try #require(try await Self.recordings(site, client).first)
            #expect(done.status == .finished, "\(done)")
            #expect(done.start == 100 && done.end == 103)
            #expect(Set(done.readings.keys) == Set(PositionTests.fixedGateways), "\(done.readings)")
            for gateway in PositionTests.fixedGateways {
                let expected = Double(PositionTests.rssi(from: spot, to: PositionTests.position(of: gateway), walls: false))
                #expect(abs(done.readings[gateway]! - expected) < 0.01, "\(gateway): \(done.readings[gateway]!) for \(expected)")
            }
            // Five packets a second at each of four gateways over [100, 103]: 16 each.
            #expect(done.packets == 64)
            #expect(done.measuredPower == -59)

            let saved = try await Self.save(site, client)
            #expect(saved.tagSurvey == 1 && saved.survey == 0 && saved.dropped == 0)
            let map = try await Self.storedMap(site, client)
            let scan = try #require(map.tagSurvey.first)
            #expect(map.tagSurvey.count == 1 && scan.position == spot && scan.measuredPower == -59)
            #expect(scan.readings.count == 4)
            #expect(map.rooms == PositionTests.map.rooms && map.receivers == PositionTests.map.receivers, "the rest of the map is kept")
            #expect(try await Self.recordings(site, client).isEmpty, "saved recordings leave the list")
            // The tracker follows the new map at once: its carried beacons now have fingerprints.
            let version = try await site.harness.server.store.siteMapVersion(siteID: site.siteID)
            #expect(version == saved.mapVersion && saved.mapVersion == 2)
            #expect(site.harness.server.ingestion.positions.tracker(siteID: site.siteID, mapVersion: saved.mapVersion)?.map.tagSurvey.count == 1)
        }
    }

    @Test func aPhoneHeldAtASpotBecomesAScanOfTheMapsSurvey() async throws {
        try await PositionTests.withSite { site, client in
            try await site.run(100...101)
            let spot = Position(x: 6, y: 3)
            let asked = try await Self.record(site, client, subject: "phone-anna", x: spot.x, y: spot.y, seconds: 2)
            #expect(asked.kind == .phone && asked.status == .recording && asked.start == 101.8, "it starts at the site's clock")
            try await site.run(102...106, phone: ("phone-anna", spot), carriedThroughWalls: false)
            let done = try #require(try await Self.recordings(site, client).first)
            #expect(done.status == .finished, "\(done)")
            #expect(Set(done.readings.keys) == ["b1", "b2", "b3", "b4"])
            for beacon in PositionTests.map.beacons {
                let expected = Double(PositionTests.rssi(from: beacon.position, to: spot, walls: false))
                #expect(abs(done.readings[beacon.id]! - expected) < 0.01)
            }
            #expect(done.measuredPower == nil)
            let saved = try await Self.save(site, client)
            #expect(saved.survey == 1 && saved.tagSurvey == 0)
            let map = try await Self.storedMap(site, client)
            #expect(map.survey.count == 1 && map.survey.first?.position == spot && map.tagSurvey.isEmpty)
        }
    }

    @Test func aTagNobodyHeardFailsAndIsNotSaved() async throws {
        try await PositionTests.withSite { site, client in
            let silent = BeaconIdentity(uuid: PositionTests.uuid, major: 7, minor: 7)
            _ = try await Self.record(site, client, subject: TrackedSubject.beacon(silent).name, x: 5, y: 5, seconds: 1)
            try await site.run(100...104)
            let failed = try #require(try await Self.recordings(site, client).first)
            #expect(failed.status == .failed && failed.packets == 0)
            #expect(failed.reason?.contains("no gateway") == true)
            try await client.execute(uri: "/v1/sites/\(site.siteID)/survey-recordings/save", method: .post, headers: site.harness.headers(.operator)) { response in
                #expect(response.status == .conflict)
                #expect(response.errorField == "recordings")
            }
            try await client.execute(uri: "/v1/sites/\(site.siteID)/survey-recordings/\(failed.id)", method: .delete, headers: site.harness.headers(.operator)) { response in
                #expect(response.status == .noContent)
            }
            #expect(try await Self.recordings(site, client).isEmpty)
            try await client.execute(uri: "/v1/sites/\(site.siteID)/survey-recordings/\(failed.id)", method: .delete, headers: site.harness.headers(.operator)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "recording")
            }
        }
    }

    static let refusals: [(String, String)] = [
        (#"{"subject": "nobody", "position": {"x": 5, "y": 5}}"#, "subject"),
        (#"{"subject": "\#(PositionTests.uuid.uuidString):100:1", "position": {"x": 5, "y": 5}}"#, "subject"),
        (#"{"subject": "pi-west", "position": {"x": 5, "y": 5}}"#, "subject"),
        (#"{"subject": "", "position": {"x": 5, "y": 5}}"#, "subject"),
        (#"{"subject": 5, "position": {"x": 5, "y": 5}}"#, "subject"),
        (#"{"subject": "phone-anna", "position": {"x": 25, "y": 5}}"#, "position.x"),
        (#"{"subject": "phone-anna", "position": {"x": 5, "y": -1}}"#, "position.y"),
        (#"{"subject": "phone-anna", "position": {"x": 5}}"#, "position.y"),
        (#"{"subject": "phone-anna", "position": {"x": 5, "y": 5}, "seconds": 0}"#, "seconds"),
        (#"{"subject": "phone-anna", "position": {"x": 5, "y": 5}, "seconds": 1000}"#, "seconds"),
        ("", "body"),
    ]

    @Test(arguments: refusals)
    func refusedRecordingsNameTheField(body: String, field: String) async throws {
        try await PositionTests.withSite { site, client in
            try await client.execute(uri: "/v1/sites/\(site.siteID)/survey-recordings", method: .post, headers: site.harness.headers(.operator),
                                     body: ByteBuffer(string: body)) { response in
                #expect([.badRequest, .unprocessableContent].contains(response.status), "\(response.status)")
                #expect(response.errorField == field, "\(response.text)")
            }
            #expect(try await Self.recordings(site, client).isEmpty, "a refused recording is not kept")
        }
    }

    @Test func eachRoleIsChecked() async throws {
        try await PositionTests.withSite { site, client in
            let base = "/v1/sites/\(site.siteID)/survey-recordings"
            let writes: [(String, HTTPRequest.Method)] = [(base, .post), ("\(base)/save", .post), ("\(base)/1", .delete)]
            for (path, method) in writes {
                for (role, status) in [(nil, HTTPResponse.Status.unauthorized), (.readOnly, .forbidden), (.gateway, .forbidden)] as [(Role?, HTTPResponse.Status)] {
                    try await client.execute(uri: path, method: method, headers: site.harness.headers(role), body: Self.body(subject: "phone-anna", x: 1, y: 1)) { response in
                        #expect(response.status == status, "\(method) \(path) as \(String(describing: role))")
                        #expect(response.errorField == "Authorization")
                    }
                }
            }
            for (role, status) in [(nil, HTTPResponse.Status.unauthorized), (.gateway, .forbidden)] as [(Role?, HTTPResponse.Status)] {
                try await client.execute(uri: base, method: .get, headers: site.harness.headers(role)) { #expect($0.status == status) }
            }
            _ = try await Self.record(site, client, subject: "phone-anna", x: 1, y: 1)
            #expect(try await Self.recordings(site, client).count == 1, "read-only tokens list recordings")
            try await client.execute(uri: "/v1/sites/999/survey-recordings", method: .get, headers: site.harness.headers(.readOnly)) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func aSiteWithoutAMapHasNoRecordings() async throws {
        try await RouterHarness.with { harness, client in
            let path = "/v1/sites/\(harness.office.site.id)/survey-recordings"
            try await client.execute(uri: path, method: .post, headers: harness.headers(.operator), body: Self.body(subject: "door", x: 1, y: 1)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "id")
            }
            try await client.execute(uri: path, method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "id")
            }
        }
    }

    @Test func aSiteKeepsABoundedNumberOfRecordings() async throws {
        try await PositionTests.withSite { site, client in
            for _ in 0..<SurveyRecorder.maximumRecordings {
                _ = try await Self.record(site, client, subject: "phone-anna", x: 1, y: 1)
            }
            try await client.execute(uri: "/v1/sites/\(site.siteID)/survey-recordings", method: .post, headers: site.harness.headers(.operator),
                                     body: Self.body(subject: "phone-anna", x: 1, y: 1)) { response in
                #expect(response.status == .conflict)
                #expect(response.errorField == "recordings")
            }
            #expect(try await Self.recordings(site, client).count == SurveyRecorder.maximumRecordings)
        }
    }

    @Test func readingsOfReceiversTheMapNoLongerHasAreDroppedOnSaving() async throws {
        try await PositionTests.withSite { site, client in
            let tag = site.harness.office.mordor.identity
            _ = try await Self.record(site, client, subject: TrackedSubject.beacon(tag).name, x: 15, y: 5, seconds: 1)
            try await site.run(100...103, carried: (tag, { _ in Position(x: 15, y: 5) }), carriedThroughWalls: false)
            // A new map without pi-east and pi-south, uploaded while the scan waits to be saved.
            let smaller = PositionTests.mapJSON
                .replacingOccurrences(of: #", {"name": "pi-east", "position": {"x": 16, "y": 5}}"#, with: "")
                .replacingOccurrences(of: #", {"name": "pi-south", "position": {"x": 14, "y": 1}}"#, with: "")
            try await client.execute(uri: "/v1/sites/\(site.siteID)/map", method: .put, headers: site.harness.headers(.operator),
                                     body: ByteBuffer(string: smaller)) { #expect($0.status == .ok, "\($0.text)") }
            let saved = try await Self.save(site, client)
            #expect(saved.tagSurvey == 1 && saved.mapVersion == 3)
            let map = try await Self.storedMap(site, client)
            #expect(map.receivers.count == 3)
            let scan = try #require(map.tagSurvey.first)
            #expect(Set(scan.readings.map { map.receivers[$0.beacon].name }) == ["pi-west", "pi-north"])
        }
    }
}
