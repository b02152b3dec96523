import BeaconKit
import BeaconSimulator
import Foundation
import Testing

let minimalScenario = """
{
  "name": "corridor", "seed": 7, "duration": 20,
  "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
  "venue": {"width": 30, "height": 10, "walls": [{"from": {"x": 15, "y": 0}, "to": {"x": 15, "y": 10}, "attenuation": 20}]},
  "beacons": [
    {"name": "left", "major": 1, "minor": 10, "position": {"x": 2, "y": 5}},
    {"name": "right", "major": 1, "minor": 20, "position": {"x": 28, "y": 5}, "tlm": true, "battery": 2900}
  ],
  "receivers": [
    {"name": "gateway", "position": {"x": 5, "y": 5}},
    {"name": "walker", "path": {"waypoints": [{"x": 1, "y": 5, "pause": 2}, {"x": 29, "y": 5}], "speed": 1.4}}
  ],
  "regions": [{"name": "store", "major": 1}, {"name": "left only", "major": 1, "minor": 10}]
}
"""

@Suite struct ScenarioLoadingTests {
    @Test func loadsEveryField() throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        #expect(scenario.name == "corridor")
        #expect(scenario.seed == 7)
        #expect(scenario.beacons.count == 2)
        #expect(scenario.beacons[1].telemetry)
        #expect(scenario.beacons[1].batteryMillivolts == 2900)
        #expect(scenario.beacons[0].interval == 0.1)
        #expect(scenario.venue.walls.first?.attenuation == 20)
        #expect(scenario.regions.map(\.name) == ["store", "left only"])
        #expect(scenario.regions[0].minor == nil)
        guard case .walking(let path) = scenario.receivers[1].placement else {
            Issue.record("the second receiver should walk"); return
        }
        #expect(abs(path.period - (2 + 28 / 1.4)) < 1e-9)
        #expect(scenario.receivers[1].body)
        #expect(!scenario.receivers[0].body)
    }

    /// Each malformed document is refused with the JSON path of the bad field.
    @Test(arguments: [
        (#"{"beacons": [{"major": 1, "minor": 1, "position": {"x": 1, "y": 1}}, {"major": 1, "minor": 1, "position": {"x": 1, "y": 1}}, {"major": 1, "minor": 2, "position": {"x": "abc", "y": 1}}]}"#,
         #"beacons[2].position.x: expected a number, found "abc""#),
        (#"{"beacons": [{"major": 70000, "minor": 1, "position": {"x": 1, "y": 1}}]}"#,
         "beacons[0].major: expected an integer in 0…65535, found 70000"),
        (#"{"beacons": [{"major": 1, "minor": 1, "position": {"x": 99, "y": 1}}]}"#,
         "beacons[0].position.x: expected a number in 0…30, found 99"),
        (#"{"beacons": [{"major": 1, "minor": 1, "position": {"x": 1, "y": 1}, "colour": "red"}]}"#,
         "beacons[0].colour: expected one of the keys address, battery, batteryType, interval, major, measuredPower, minor, name, path, position, rotation, switching, tlm, txPower, uuid, found an unknown key"),
        (#"{"receivers": [{"name": "a", "path": {"waypoints": [], "speed": 1}}]}"#,
         "receivers[0].path.waypoints: expected at least one waypoint, found an empty array"),
        (#"{"receivers": [{"name": "a"}]}"#,
         #"receivers[0].position: expected a "position" (a gateway) or a "path" (a walker), found neither"#),
        (#"{"channel": {"fading": {"model": "nakagami"}}}"#,
         #"channel.fading.model: expected "rician", "lognormal" or "none", found "nakagami""#),
        (#"{"channel": {"shadowing": {"sigma": -1}}}"#,
         "channel.shadowing.sigma: expected a number in 0…20, found -1"),
        (#"{"uuid": "not-a-uuid"}"#,
         #"uuid: expected a UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, found "not-a-uuid""#),
        (#"{"venue": null}"#, "venue: expected a value, found nothing (the field is required)"),
        (#"{"beacons": [{"major": 1, "minor": 1, "position": {"x": 1, "y": 1}, "address": "zz"}]}"#,
         #"beacons[0].address: expected an address like C0:00:00:00:00:01, found "zz""#),
    ])
    func namesThePathOfTheBadField(patch: String, message: String) throws {
        let document = try merged(patch)
        #expect(throws: ScenarioError.self) { try Scenario.decode(document) }
        do {
            _ = try Scenario.decode(document)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func refusesWhatIsNotJSON() {
        for text in ["", "{", "[1, 2]", "{\"venue\": ", "\u{0}\u{1}garbage", "42"] {
            #expect(throws: ScenarioError.self) { try Scenario.decode(Data(text.utf8)) }
        }
    }

    @Test func syntaxErrorsGiveLineAndColumn() {
        #expect(throws: ScenarioError.self) { try Scenario.decode(Data("{\"a\": 1,\n \"b\": x}".utf8)) }
        do { _ = try Scenario.decode(Data("{\"a\": 1,\n \"b\": x}".utf8)) } catch {
            #expect(error.description.contains("line 2, column 7"), "\(error)")
        }
    }

    @Test func refusesScenariosTooLargeToSimulate() throws {
        let beacons = (0..<2100).map { #"{"major": 1, "minor": \#($0), "position": {"x": 1, "y": 1}}"# }.joined(separator: ",")
        let receivers = (0..<1000).map { #"{"name": "r\#($0)", "position": {"x": 1, "y": 1}}"# }.joined(separator: ",")
        let document = try merged("{\"beacons\": [\(beacons)], \"receivers\": [\(receivers)]}")
        do {
            _ = try Scenario.decode(document)
            Issue.record("a scenario with 2.1 million links was accepted")
        } catch {
            #expect(error.description == "receivers: expected at most 2000000 receiver–beacon links, found 2100000 (1000 receivers × 2100 beacons)")
        }
    }

    /// Damaged scenarios (bytes deleted, duplicated or replaced at random) are refused with a
    /// ScenarioError or, when still valid, simulate without trapping.
    @Test func damagedDocumentsNeverCrash() {
        var random = SeededGenerator(seed: 99)
        let original = Array(minimalScenario.utf8)
        var accepted = 0
        for _ in 0..<250 {
            var bytes = original
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes.remove(at: index)
                case 1: bytes.insert(bytes[index], at: index)
                default: bytes[index] = Array("0123456789-.e\"{}[],: x".utf8)[Int(random.next() % 22)]
                }
            }
            do {
                var scenario = try Scenario.decode(Data(bytes))
                scenario.duration = min(scenario.duration, 2)
                var simulation = Simulation(scenario: scenario)
                _ = simulation.run()
                accepted += 1
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
        #expect(accepted > 0 && accepted < 250)
    }

    /// Replaces top-level keys of the minimal scenario with those of the patch.
    private func merged(_ patch: String) throws -> Data {
        var base = try JSONSerialization.jsonObject(with: Data(minimalScenario.utf8)) as! [String: Any]
        let changes = try JSONSerialization.jsonObject(with: Data(patch.utf8)) as! [String: Any]
        for (key, value) in changes { base[key] = value }
        return try JSONSerialization.data(withJSONObject: base)
    }
}
