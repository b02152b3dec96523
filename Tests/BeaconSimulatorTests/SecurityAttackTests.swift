import BeaconKit
import BeaconSecurity
@testable import BeaconSimulator
import Foundation
import Testing

/// A 40 m hall with a gateway at each end, two fixed beacons and a carried tag; `attacks` is
/// spliced in.
func attackScenario(_ attacks: String, duration: Double = 300) -> String {
    """
    {
      "name": "attacks", "seed": 9, "duration": \(duration), "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
      "venue": {"width": 40, "height": 20},
      "channel": {"sensitivity": -95},
      "beacons": [
        {"name": "door", "major": 1, "minor": 1, "position": {"x": 2, "y": 10}},
        {"name": "shelf", "major": 1, "minor": 2, "position": {"x": 38, "y": 10}},
        {"name": "tag", "major": 2, "minor": 1, "path": {"waypoints": [{"x": 3, "y": 5}, {"x": 8, "y": 5}], "speed": 1, "loop": true}}
      ],
      "receivers": [
        {"name": "west", "position": {"x": 1, "y": 10}},
        {"name": "east", "position": {"x": 39, "y": 10}}
      ],
      "attacks": \(attacks)
    }
    """
}

@Suite struct SecurityAttackLoadingTests {
    @Test func loadsEveryKindAndAddsOnlyUnregisteredTransmitters() throws {
        let scenario = try Scenario.decode(Data(attackScenario("""
            [{"kind": "spoofer", "beacons": ["door"], "position": {"x": 37, "y": 10}, "at": 50, "until": 100},
             {"kind": "fastClone", "name": "racer", "beacon": "tag", "at": 60, "path": {"waypoints": [{"x": 5, "y": 5}, {"x": 35, "y": 5}], "speed": 8}},
             {"kind": "clockSkew", "receiver": "east", "at": 70, "offset": 30},
             {"kind": "replay", "beacons": ["shelf"], "capturedBy": "east", "from": 10, "to": 20, "at": 200, "via": "west"}]
            """).utf8))
        #expect(scenario.attacks.map(\.kindName) == ["spoofer", "fastClone", "clockSkew", "replay"])
        #expect(scenario.attacks.map(\.name) == ["spoofer 1", "racer", "clockSkew 3", "replay 4"])
        #expect(scenario.beacons.count == 5)
        #expect(scenario.registeredBeacons.map(\.name) == ["door", "shelf", "tag"])
        // A spoofer copies identity and address by default; the clone starts moving when it appears.
        #expect(scenario.beacons[3].identity == scenario.beacons[0].identity)
        #expect(scenario.beacons[3].address == scenario.beacons[0].address)
        #expect(scenario.beacons[4].path?.start == 60)
        let schedule = scenario.transmissionSchedule()
        #expect(schedule[3] == [0..<50, 100..<300])
        #expect(schedule[4] == [0..<60])
    }

    @Test(arguments: [
        (#"[{"kind": "jam", "at": 1}]"#, "attacks[0].kind"),
        (#"[{"kind": "spoofer", "beacons": ["tag"], "position": {"x": 1, "y": 1}, "at": 1}]"#, "attacks[0].beacons[0]"),
        (#"[{"kind": "spoofer", "beacons": [], "position": {"x": 1, "y": 1}, "at": 1}]"#, "attacks[0].beacons"),
        (#"[{"kind": "spoofer", "beacons": ["door"], "position": {"x": 99, "y": 1}, "at": 1}]"#, "attacks[0].position.x"),
        (#"[{"kind": "spoofer", "beacons": ["door"], "position": {"x": 1, "y": 1}, "at": 10, "until": 5}]"#, "attacks[0].until"),
        (#"[{"kind": "fastClone", "beacon": "tag", "at": 1, "path": {"waypoints": [{"x": 1, "y": 1}], "speed": 1.5}}]"#, "attacks[0].path.speed"),
        (#"[{"kind": "fastClone", "beacon": "nobody", "at": 1, "path": {"waypoints": [{"x": 1, "y": 1}], "speed": 5}}]"#, "attacks[0].beacon"),
        (#"[{"kind": "clockSkew", "receiver": "north", "offset": 5}]"#, "attacks[0].receiver"),
        (#"[{"kind": "clockSkew", "receiver": "east"}]"#, "attacks[0].offset"),
        (#"[{"kind": "clockSkew", "receiver": "east", "drift": 2}]"#, "attacks[0].drift"),
        (#"[{"kind": "replay", "beacons": ["door"], "capturedBy": "west", "from": 10, "to": 20, "at": 15}]"#, "attacks[0].at"),
        (#"[{"kind": "replay", "beacons": ["door"], "capturedBy": "west", "from": 10, "to": 5, "at": 15}]"#, "attacks[0].to"),
        (#"[{"kind": "replay", "beacons": ["door"], "capturedBy": "west", "from": 1, "to": 2, "at": 3, "timestamps": "new"}]"#, "attacks[0].timestamps"),
        (#"[{"kind": "clockSkew", "receiver": "east", "offset": 1, "colour": 1}]"#, "attacks[0].colour"),
        (#"[{"kind": "clockSkew", "name": "a", "receiver": "east", "offset": 1}, {"kind": "clockSkew", "name": "a", "receiver": "west", "offset": 1}]"#, "attacks[1].name"),
        (#"{"kind": "clockSkew"}"#, "attacks"),
    ])
    func malformedAttacksNameTheirPath(attacks: String, path: String) {
        #expect {
            _ = try Scenario.decode(Data(attackScenario(attacks).utf8))
        } throws: { error in
            (error as? ScenarioError)?.path == path
        }
    }
}

@Suite struct SecurityAttackTruthTests {
    @Test func forgedSightingsAreMarkedWithTheirAttack() throws {
        let scenario = try Scenario.decode(Data(attackScenario("""
            [{"kind": "spoofer", "beacons": ["door"], "position": {"x": 37, "y": 10}, "at": 50, "until": 100},
             {"kind": "clockSkew", "receiver": "east", "at": 150, "offset": 30},
             {"kind": "replay", "beacons": ["shelf"], "capturedBy": "east", "from": 10, "to": 20, "at": 200, "via": "west", "timestamps": "original"}]
            """, duration: 250).utf8))
        var stream = AttackedSimulation(scenario: scenario)
        var byAttack: [Int?: [ObservedSighting]] = [:]
        while let item = stream.next() { byAttack[item.attack, default: []].append(item) }
        let spoofed = try #require(byAttack[0])
        #expect(spoofed.allSatisfy { $0.truth.transmitter == 3 && $0.sighting.time >= 50 && $0.sighting.time < 100 })
        let skewed = try #require(byAttack[1])
        #expect(skewed.allSatisfy { $0.sighting.receiver == "east" && ($0.serverTime - ($0.sighting.time - 30)) > 0 && ($0.serverTime - ($0.sighting.time - 30)) <= 1.05 })
        let replayed = try #require(byAttack[2])
        // Re-posted through the west gateway with the times the east one heard them.
        #expect(replayed.allSatisfy { $0.sighting.receiver == "west" && $0.sighting.time >= 10 && $0.sighting.time < 20 && $0.serverTime >= 200 })
        #expect(replayed.allSatisfy { $0.truth.beacon == "shelf" })
        let honest = try #require(byAttack[nil])
        #expect(honest.allSatisfy { $0.truth.transmitter < 3 && !($0.sighting.receiver == "east" && $0.sighting.time >= 150) })
        // Honest batches reach the server within one upload period.
        #expect(honest.allSatisfy { $0.serverTime > $0.sighting.time && $0.serverTime - $0.sighting.time <= AttackedSimulation.uploadPeriod + AttackedSimulation.transit })
    }

    @Test func eachAttackIsDetectedByItsCheckAndHonestTrafficIsQuiet() throws {
        let scenario = try Scenario.decode(Data(attackScenario("""
            [{"kind": "spoofer", "beacons": ["door"], "position": {"x": 37, "y": 12}, "at": 100, "until": 200},
             {"kind": "fastClone", "beacon": "tag", "at": 300, "path": {"waypoints": [{"x": 10, "y": 5}, {"x": 36, "y": 5}], "speed": 6, "loop": true}},
             {"kind": "clockSkew", "receiver": "east", "at": 500, "offset": 60},
             {"kind": "replay", "beacons": ["shelf"], "capturedBy": "east", "from": 10, "to": 20, "at": 700, "via": "west"}]
            """, duration: 800).utf8))
        let report = SecurityEvaluation(scenario: scenario).run()
        #expect(report.attacks.map(\.detected) == [true, true, true, true])
        // A copy near the east gateway, which also hears the real door, changes its RSSI there too.
        let expectedChecks: [Set<String>] = [["outOfCoverage", "rssiShift"], ["impossibleTrace"], ["clockSkew"], ["outOfCoverage"]]
        for (result, expected) in zip(report.attacks, expectedChecks) {
            #expect(expected.contains(result.detectedBy ?? "missed"), "\(result.attack): \(result.detectedBy ?? "missed")")
        }
        #expect(report.falseAlarms.isEmpty, "\(report.falseAlarms.map(\.reason))")
        #expect(report.attacks.allSatisfy { ($0.latency ?? .infinity) < 60 })
    }

    @Test func aSpooferFromAnotherAddressIsASecondAddress() throws {
        let scenario = try Scenario.decode(Data(attackScenario("""
            [{"kind": "spoofer", "beacons": ["door"], "position": {"x": 3, "y": 10}, "at": 100, "copyAddress": false}]
            """, duration: 200).utf8))
        let report = SecurityEvaluation(scenario: scenario).run()
        #expect(report.attacks.first?.detectedBy == "secondAddress")
        #expect(report.falseAlarms.isEmpty)
    }
}

@Suite struct RotatingBeaconScenarioTests {
    static func scenario(rotation: String) -> String {
        attackScenario("[]", duration: 150).replacingOccurrences(
            of: #""speed": 1, "loop": true}}"#, with: #""speed": 1, "loop": true}, "rotation": \#(rotation)}"#)
    }

    @Test func aRotatingBeaconSendsEachPeriodsIdentity() throws {
        let scenario = try Scenario.decode(Data(Self.scenario(rotation: #"{"key": "000102030405060708090a0b0c0d0e0f", "period": 60}"#).utf8))
        let rotation = try #require(scenario.beacons[2].rotation)
        var simulation = Simulation(scenario: scenario)
        let tagFrames = simulation.run().filter { $0.truth.beacon == "tag" }
        #expect(!tagFrames.isEmpty)
        for item in tagFrames {
            guard case .iBeacon(let frame) = item.sighting.frame else { continue }
            #expect(frame.identity == rotation.identity(forPeriod: Int64(item.sighting.time / 60)))
        }
        #expect(Set(tagFrames.compactMap { item -> BeaconIdentity? in
            if case .iBeacon(let frame) = item.sighting.frame { frame.identity } else { nil }
        }).count == 3)
    }

    @Test(arguments: [
        (#"{"key": "00ff", "period": 60}"#, "beacons[2].rotation.key"),
        (#"{"key": "000102030405060708090a0b0c0d0e0f", "period": 10}"#, "beacons[2].rotation.period"),
        (#"{"key": "000102030405060708090a0b0c0d0e0f", "period": "soon"}"#, "beacons[2].rotation.period"),
        (#"{"key": "000102030405060708090a0b0c0d0e0f", "salt": 1}"#, "beacons[2].rotation.salt"),
    ])
    func malformedRotationsNameTheirPath(rotation: String, path: String) {
        #expect {
            _ = try Scenario.decode(Data(Self.scenario(rotation: rotation).utf8))
        } throws: { error in
            (error as? ScenarioError)?.path == path
        }
    }
}
