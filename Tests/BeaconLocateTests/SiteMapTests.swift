import BeaconKit
import BeaconLocate
import Foundation
import Testing

@Suite struct SiteMapTests {
    static let valid = """
    {"name": "office", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
     "venue": {"width": 20, "height": 10, "walls": [{"from": {"x": 10, "y": 0}, "to": {"x": 10, "y": 4}, "attenuation": 6}]},
     "rooms": [{"name": "west", "polygon": [{"x": 0, "y": 0}, {"x": 10, "y": 0}, {"x": 10, "y": 10}, {"x": 0, "y": 10}]}],
     "doors": [{"name": "d", "position": {"x": 10, "y": 5}}],
     "beacons": [{"name": "b1", "major": 1, "minor": 2, "position": {"x": 1, "y": 1}, "measuredPower": -59}],
     "receivers": [{"name": "pi", "room": "west"}, {"name": "gw", "position": {"x": 5, "y": 5}}],
     "pointsOfInterest": [{"name": "car", "position": {"x": 2, "y": 8}}],
     "survey": [{"position": {"x": 3, "y": 1}, "rssi": {"b1": -66.5}}],
     "tagSurvey": [{"position": {"x": 4, "y": 2}, "rssi": {"gw": -71}}, {"position": {"x": 6, "y": 2}, "measuredPower": -65, "rssi": {"gw": -77.5}}]}
    """

    @Test func loadsEveryPart() throws {
        let map = try SiteMap.decode(Data(Self.valid.utf8))
        #expect(map.walls.count == 1 && map.rooms.count == 1 && map.doors.count == 1)
        #expect(map.beacons[0].identity?.minor == 2)
        #expect(map.room(ofReceiver: "pi") == "west")
        #expect(map.room(ofReceiver: "gw") == "west")
        #expect(map.room(at: Position(x: 15, y: 5)) == nil)
        #expect(map.survey == [SurveyPoint(position: Position(x: 3, y: 1), readings: [Reading(beacon: 0, rssi: -66.5)])])
        // Receivers by index in `receivers` ("gw" is the second); the power defaults to -59.
        #expect(map.tagSurvey == [TagSurveyPoint(position: Position(x: 4, y: 2), measuredPower: -59, readings: [Reading(beacon: 1, rssi: -71)]),
                                  TagSurveyPoint(position: Position(x: 6, y: 2), measuredPower: -65, readings: [Reading(beacon: 1, rssi: -77.5)])])
    }

    @Test(arguments: [
        ("\"x\": 1, \"y\": 1}, \"measuredPower\": -59", "\"x\": 25, \"y\": 1}, \"measuredPower\": -59", "beacons[0].position.x"),
        ("{\"name\": \"pi\", \"room\": \"west\"}", "{\"name\": \"pi\", \"room\": \"attic\"}", "receivers[0].room"),
        ("\"minor\": 2,", "\"minor\": \"two\",", "beacons[0].minor"),
        ("{\"x\": 10, \"y\": 10}, {\"x\": 0, \"y\": 10}]", "{\"x\": 10, \"y\": 10}, {\"x\": 0}]", "rooms[0].polygon[3].y"),
        ("{\"name\": \"gw\", \"position\": {\"x\": 5, \"y\": 5}}", "{\"name\": \"pi\", \"position\": {\"x\": 5, \"y\": 5}}", "receivers[1].name"),
        ("\"rssi\": {\"b1\": -66.5}", "\"rssi\": {\"b9\": -66.5}", "survey[0].rssi"),
        ("\"rssi\": {\"b1\": -66.5}", "\"rssi\": {\"b1\": -200}", "survey[0].rssi.b1"),
        ("\"rssi\": {\"b1\": -66.5}", "\"rssi\": {}", "survey[0].rssi"),
        ("{\"x\": 3, \"y\": 1}, \"rssi\"", "{\"x\": 3, \"y\": 11}, \"rssi\"", "survey[0].position.y"),
        ("\"rssi\": {\"b1\": -66.5}", "\"rssi\": [-66.5]", "survey[0].rssi"),
        // A tag survey names placed receivers: "pi" has only a room, "b1" is a beacon.
        ("\"rssi\": {\"gw\": -71}", "\"rssi\": {\"pi\": -71}", "tagSurvey[0].rssi"),
        ("\"rssi\": {\"gw\": -71}", "\"rssi\": {\"b1\": -71}", "tagSurvey[0].rssi"),
        ("\"rssi\": {\"gw\": -71}", "\"rssi\": {}", "tagSurvey[0].rssi"),
        ("\"rssi\": {\"gw\": -71}", "\"rssi\": {\"gw\": 99}", "tagSurvey[0].rssi.gw"),
        ("\"measuredPower\": -65", "\"measuredPower\": -300", "tagSurvey[1].measuredPower"),
        ("{\"x\": 6, \"y\": 2}, \"measuredPower\"", "{\"x\": 26, \"y\": 2}, \"measuredPower\"", "tagSurvey[1].position.x"),
    ])
    func refusalsNameTheField(original: String, replacement: String, path: String) throws {
        let text = Self.valid.replacingOccurrences(of: original, with: replacement)
        #expect(text != Self.valid)
        do {
            _ = try SiteMap.decode(Data(text.utf8))
            Issue.record("accepted a bad map")
        } catch {
            #expect(error.path == path, "\(error)")
        }
    }

    @Test func refusesOversizedDocumentsAndCounts() throws {
        let huge = Data(repeating: 0x20, count: SiteMap.Limits.bytes + 1)
        #expect(throws: SiteMapError.self) { try SiteMap.decode(huge) }
        let doors = (0...SiteMap.Limits.doors).map { _ in "{\"position\": {\"x\": 1, \"y\": 1}}" }.joined(separator: ",")
        let text = Self.valid.replacingOccurrences(of: "\"doors\": [{\"name\": \"d\", \"position\": {\"x\": 10, \"y\": 5}}]", with: "\"doors\": [\(doors)]")
        do {
            _ = try SiteMap.decode(Data(text.utf8))
            Issue.record("accepted too many doors")
        } catch {
            #expect(error.path == "doors")
        }
    }

    @Test func tablesNameLineAndColumn() throws {
        let beacons = try BeaconTable.parse("id,x,y,measured_power\nb1,0,0,-59\nb2,5,0,\n")
        #expect(beacons.count == 2 && beacons[1].measuredPower == nil)
        #expect(throws: TableError.self) { try BeaconTable.parse("id,x,y\nb1,zero,0\n") }
        do {
            _ = try BeaconTable.parse("id,x,y\nb1,0,0\nb2,1,nope\n", file: "b.csv")
            Issue.record("accepted a bad y")
        } catch {
            #expect(error.line == 3 && error.column == 3 && error.description.hasPrefix("b.csv:3:3"))
        }
        let layout = ScanTableLayout(missing: 100, truthX: "tx", truthY: "ty")
        let scans = try layout.parse("b1,b2,tx,ty\n-60,100,1,2\r\n-70,-80,3,4\n", beacons: beacons)
        #expect(scans.map(\.readings.count) == [1, 2])
        #expect(scans[1].truth == Position(x: 3, y: 4))
        do {
            _ = try layout.parse("b1,b2,tx,ty\n-60,100,1,2\n-70,loud,3,4\n", beacons: beacons, file: "s.csv")
            Issue.record("accepted a bad RSSI")
        } catch {
            #expect(error.line == 3 && error.column == 2)
        }
    }
}
