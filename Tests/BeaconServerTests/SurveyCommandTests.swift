import BeaconKit
import BeaconLocate
@testable import BeaconServer
import Foundation
import Testing

/// `proxima survey` against a real `proxima serve`, with a phone posting its own sightings
/// through the API while the command waits for its recording to finish.
@Suite("proxima survey")
struct SurveyCommandTests {
    static let uuid = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"

    static let mapJSON = """
    {"name": "hall", "uuid": "\(uuid)", "venue": {"width": 20, "height": 10},
     "rooms": [{"name": "hall", "polygon": [{"x": 0, "y": 0}, {"x": 20, "y": 0}, {"x": 20, "y": 10}, {"x": 0, "y": 10}]}],
     "beacons": [{"name": "b1", "major": 100, "minor": 1, "position": {"x": 2, "y": 2}},
                 {"name": "b2", "major": 100, "minor": 2, "position": {"x": 18, "y": 8}}],
     "receivers": [{"name": "pi-west", "position": {"x": 4, "y": 5}}, {"name": "pi-east", "position": {"x": 16, "y": 5}}]}
    """

    struct Registered: Decodable { var token: String; var gateway: Gateway }
    struct Identified: Decodable { var id: Int }
    struct Organisation: Decodable { var id: UUID }

    @Test func recordsAPhonesScanWaitsForItAndSavesItIntoTheMap() async throws {
        let directory = NSTemporaryDirectory() + "proxima-survey-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "survey-cli")
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let organisation = try JSONDecoder().decode(Organisation.self, from: try await admin.data("POST", "/v1/organisations",
            body: Data(#"{"name":"Survey Co","proximityUUIDs":["\#(Self.uuid)"]}"#.utf8)))
        let site = try JSONDecoder().decode(Identified.self, from: try await admin.data("POST", "/v1/sites",
            body: Data(#"{"organisationID":"\#(organisation.id.uuidString)","name":"Hall","retainEvents":86400}"#.utf8))).id
        let phone = try JSONDecoder().decode(Registered.self, from: try await admin.data("POST", "/v1/gateways",
            body: Data(#"{"name":"phone-1","siteID":\#(site)}"#.utf8)))
        _ = try await admin.data("PUT", "/v1/sites/\(site)/map", body: Data(Self.mapJSON.utf8))
        let phoneClient = APIClient(base: base, token: phone.token)
        var sequence = 0
        func post(_ times: [Double], b1: Int8 = -61, b2: Int8 = -77) async throws {
            var sightings: [Sighting] = []
            for time in times {
                for (minor, rssi) in [(UInt16(1), b1), (2, b2)] {
                    sightings.append(Sighting(time: time, receiver: "phone-1", address: BluetoothAddress(rawValue: UInt64(minor)), rssi: rssi,
                                              frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: UUID(uuidString: Self.uuid)!, major: 100, minor: minor),
                                                                           measuredPower: MeasuredPower(-59)))))
                }
            }
            sequence += 1
            _ = try await phoneClient.data("POST", "/v1/sightings", body: try JSONEncoder().encode(SightingBatch(sequence: sequence, sightings: sightings)))
        }
        func run(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
            let process = try ProximaProcess(arguments)
            let status = try await process.waitForExit(timeout: .seconds(90))
            return (status, process.outputText)
        }
        let connection = ["--server", base.absoluteString, "--token", ProximaProcess.adminToken]

        // The site's clock is its latest sighting: 30 s ago.
        let clock = Date().timeIntervalSince1970 - 30
        try await post([clock], b1: -90, b2: -90)
        let recording = try ProximaProcess(["survey", "record"] + connection + ["--site", "\(site)", "--subject", "phone-1", "--at", "3.5,4", "--seconds", "2"])
        var started: SurveyRecorder.Listing?
        for _ in 0..<300 {
            started = try JSONDecoder().decode(SurveyRecorder.Listing.self, from: try await admin.data("GET", "/v1/sites/\(site)/survey-recordings"))
            if started?.recordings.isEmpty == false { break }
            // Waits on the child `proxima survey record` opening its window on the child `proxima serve`.
            try await Task.sleep(for: .milliseconds(100))
        }
        let window = try #require(started?.recordings.first)
        #expect(window.status == .recording && window.start == clock && window.end == clock + 2, "\(window)")
        // Inside the window the phone hears b1 at −61 and b2 at −77 dBm; then the clock passes its end by more than 2 s.
        try await post([clock + 0.5, clock + 1, clock + 1.5])
        try await post([clock + 4.5], b1: -95, b2: -95)
        let recorded = try await recording.waitForExit(timeout: .seconds(90))
        #expect(recorded == 0, "\(recording.outputText)")
        #expect(recording.outputText.contains("recording 1: phone phone-1 at 3.5,4.0 for 2 s, finished"), "\(recording.outputText)")
        #expect(recording.outputText.contains("  b1 -61.0 dBm") && recording.outputText.contains("  b2 -77.0 dBm"), "\(recording.outputText)")

        let listed = try await run(["survey", "list"] + connection + ["--site", "\(site)"])
        #expect(listed.status == 0 && listed.output.contains("site \(site): 1 recording"), "\(listed.output)")
        let saved = try await run(["survey", "save"] + connection + ["--site", "\(site)"])
        #expect(saved.status == 0 && saved.output.contains("saved 0 tag scans and 1 phone scan into site \(site)'s map (version 2)"), "\(saved.output)")
        struct Map: Decodable { struct Scan: Decodable { var rssi: [String: Double] }; var survey: [Scan] }
        let map = try JSONDecoder().decode(Map.self, from: try await admin.data("GET", "/v1/sites/\(site)/map"))
        #expect(map.survey.map(\.rssi) == [["b1": -61, "b2": -77]])

        // Refusals: the server's names the field; a bad option stops before any request.
        let refused = try await run(["survey", "record"] + connection + ["--site", "\(site)", "--subject", "nobody", "--at", "1,1", "--no-wait"])
        #expect(refused.status != 0 && refused.output.contains("422") && refused.output.contains("subject"), "\(refused.output)")
        let badSpot = try await run(["survey", "record"] + connection + ["--site", "\(site)", "--subject", "phone-1", "--at", "1;1"])
        #expect(badSpot.status == 64 && badSpot.output.contains("--at"), "\(badSpot.output)")
        let gone = try await run(["survey", "discard"] + connection + ["--site", "\(site)", "7"])
        #expect(gone.status != 0 && gone.output.contains("recording"), "\(gone.output)")
    }
}
