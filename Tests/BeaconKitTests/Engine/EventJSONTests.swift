@testable import BeaconKit
import Foundation
import Testing

/// The one event JSON form (docs/events.md): what is written is read back as the same event,
/// and a broken line is refused naming its field.
@Suite struct EventJSONTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let store = try! BeaconRegion(identifier: "store", uuid: uuid, major: 1)
    static let heard = RangedBeacon(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 7), proximity: .near, accuracy: 1.8,
                                    rssi: -71, measuredPower: MeasuredPower(-59), timestamp: 12.5, packetCount: 9)
    static let silent = RangedBeacon(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 8), proximity: .unknown, accuracy: -1,
                                     rssi: 0, measuredPower: MeasuredPower(-59), timestamp: 3, packetCount: 0)

    static let events: [BeaconEvent] = [
        .didEnter(store, time: 10.25),
        .didExit(store, time: 40),
        .didDetermineState(.outside, store, time: 0),
        .didRange([heard, silent], store, time: 13),
    ]

    @Test(arguments: events)
    func eventsReadBackAsWritten(event: BeaconEvent) throws {
        let data = try JSONEncoder().encode(event)
        #expect(try JSONDecoder().decode(BeaconEvent.self, from: data) == event)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["event"] as? String == event.kindName)
    }

    @Test func rangeEventEncodesCoreLocationFields() throws {
        let beacon = RangedBeacon(identity: Fixture.identity(1, 2), proximity: .near, accuracy: 1.5, rssi: -70,
                                  measuredPower: .appleDefault, timestamp: 12.5, packetCount: 9)
        let data = try JSONEncoder().encode(BeaconEvent.didRange([beacon], Fixture.region(), time: 13))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["event"] as? String == "range")
        let first = try #require((object["beacons"] as? [[String: Any]])?.first)
        #expect(first["proximity"] as? String == "near")
        #expect(first["rssi"] as? Int == -70)
        #expect(first["measuredPower"] as? Int == -59)
        #expect(first["packetCount"] as? Int == 9)
        #expect((object["region"] as? [String: Any])?["identifier"] as? String == "site")
    }

    @Test func rangedBeaconsKeepCoreLocationMeanings() throws {
        let text = String(decoding: try JSONEncoder().encode(Self.events[3]), as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let beacons = try #require(object["beacons"] as? [[String: Any]])
        #expect(beacons.map { $0["proximity"] as? String } == ["near", "unknown"])
        #expect(beacons.map { $0["accuracy"] as? Double } == [1.8, -1])
        #expect(beacons.map { $0["rssi"] as? Int } == [-71, 0])
        #expect(beacons.map { $0["minor"] as? Int } == [7, 8])
    }

    struct Broken: Sendable, CustomTestStringConvertible {
        var json: String
        var field: String
        var testDescription: String { field }
    }

    static let region = #""region":{"identifier":"r","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}"#
    static let broken: [Broken] = [
        Broken(json: #"{"event":"arrive","time":1,\#(region)}"#, field: "event"),
        Broken(json: #"{"event":"enter",\#(region)}"#, field: "time"),
        Broken(json: #"{"event":"state","time":1,\#(region),"state":"hovering"}"#, field: "state"),
        Broken(json: #"{"event":"enter","time":1,"region":{"identifier":"r","uuid":"not-a-uuid"}}"#, field: "region.uuid"),
        Broken(json: #"{"event":"range","time":1,\#(region),"beacons":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"proximity":"close","accuracy":1,"rssi":-60,"measuredPower":-59,"timestamp":1,"packetCount":1}]}"#,
               field: "beacons.0.proximity"),
    ]

    @Test(arguments: broken)
    func brokenEventsNameTheirField(broken: Broken) throws {
        do {
            _ = try JSONDecoder().decode(BeaconEvent.self, from: Data(broken.json.utf8))
            Issue.record("decoded \(broken.json)")
        } catch let error as DecodingError {
            #expect(Self.path(error) == broken.field)
        }
    }

    static func path(_ error: DecodingError) -> String {
        let context: DecodingError.Context? = switch error {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context): context
        @unknown default: nil
        }
        var path = (context?.codingPath ?? []).map { $0.intValue.map(String.init) ?? $0.stringValue }
        if case .keyNotFound(let key, _) = error { path.append(key.stringValue) }
        return path.joined(separator: ".")
    }
}
