import BeaconFleet
import BeaconKit
@testable import BeaconSimulator
import Foundation
import Testing

/// A 40 m hall, two gateways, three beacons; `faults` is spliced in.
func faultScenario(_ faults: String, duration: Double = 600) -> String {
    """
    {
      "name": "faults", "seed": 5, "duration": \(duration), "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
      "venue": {"width": 40, "height": 20},
      "channel": {"sensitivity": -95, "shadowing": {"sigma": 0}, "fading": {"model": "none"}},
      "beacons": [
        {"name": "tag", "major": 1, "minor": 1001, "position": {"x": 5, "y": 10}, "interval": 0.2, "tlm": true, "battery": 3000, "batteryType": "CR2032"},
        {"name": "shelf", "major": 1, "minor": 1002, "position": {"x": 8, "y": 10}, "interval": 0.2},
        {"name": "door", "major": 1, "minor": 1003, "position": {"x": 35, "y": 10}, "interval": 0.5}
      ],
      "receivers": [
        {"name": "west", "position": {"x": 4, "y": 8}},
        {"name": "east", "position": {"x": 36, "y": 8}}
      ],
      "faults": \(faults)
    }
    """
}

@Suite struct ScenarioFaultLoadingTests {
    @Test func loadsEveryKind() throws {
        let scenario = try Scenario.decode(Data(faultScenario("""
            [{"kind": "batteryDeath", "beacon": "tag", "start": 100, "knee": {"at": 300, "millivolts": 2800}, "death": 500},
             {"kind": "move", "beacon": "shelf", "at": 200, "to": {"x": 30, "y": 10}},
             {"kind": "rogue", "at": 50, "position": {"x": 20, "y": 5}, "major": 1, "minor": 1999},
             {"kind": "clone", "beacon": "door", "at": 60, "position": {"x": 10, "y": 15}, "address": "D0:00:00:00:00:AA"},
             {"kind": "receiverOffline", "receiver": "east", "from": 100, "to": 200}]
            """).utf8))
        #expect(scenario.faults.map(\.kindName) == ["batteryDeath", "move", "rogue", "clone", "receiverOffline"])
        #expect(scenario.beacons.count == 5)
        #expect(scenario.registeredBeacons.map(\.name) == ["tag", "shelf", "door"])
        #expect(scenario.beacons[4].identity == scenario.beacons[2].identity)
        #expect(scenario.beacons[4].address == BluetoothAddress("D0:00:00:00:00:AA"))
        guard case .batteryDeath(_, let discharge) = scenario.faults[0].kind else { Issue.record("not a battery death"); return }
        // CR2032's cutoff from BatteryType, reached at the death; the knee bends the line.
        #expect(discharge.cutoffMillivolts == 2100)
        #expect(discharge.millivolts(at: 0) == 3000)
        #expect(discharge.millivolts(at: 200) == 2900)
        #expect(discharge.millivolts(at: 300) == 2800)
        #expect(discharge.millivolts(at: 400) == 2450)
        #expect(discharge.millivolts(at: 600) == 2100)
        #expect(scenario.position(of: scenario.beacons[1], at: 199) == Position3D(x: 8, y: 10))
        #expect(scenario.position(of: scenario.beacons[1], at: 200) == Position3D(x: 30, y: 10))
        let schedule = scenario.transmissionSchedule()
        #expect(schedule[0] == [500..<600])
        #expect(schedule[3] == [0..<50])
        #expect(schedule[4] == [0..<60])
    }

    /// Each bad fault is refused with the JSON path of the field.
    @Test(arguments: [
        (#"[{"kind": "melt", "beacon": "tag"}]"#, #"faults[0].kind: expected "batteryDeath", "move", "rogue", "clone" or "receiverOffline", found "melt""#),
        (#"[{"kind": "batteryDeath", "beacon": "nobody", "death": 10}]"#, #"faults[0].beacon: expected the name of exactly one beacon, found "nobody""#),
        (#"[{"kind": "batteryDeath", "beacon": "tag", "start": 50, "death": 10}]"#, #"faults[0].death: expected a time after "start" (50.0), found 10.0"#),
        (#"[{"kind": "batteryDeath", "beacon": "tag", "death": 100, "knee": {"at": 200, "millivolts": 2500}}]"#,
         #"faults[0].knee.at: expected a time between "start" (0.0) and "death" (100.0), found 200.0"#),
        (#"[{"kind": "batteryDeath", "beacon": "tag", "death": 100, "cutoff": 3500}]"#,
         "faults[0].cutoff: expected a cutoff below the beacon's battery (3000 mV), found 3500"),
        (#"[{"kind": "move", "beacon": "shelf", "at": 10, "to": {"x": 50, "y": 1}}]"#, "faults[0].to.x: expected a number in 0…40, found 50"),
        (#"[{"kind": "move", "beacon": "shelf", "at": 10, "to": {"x": 5, "y": 1}, "death": 3}]"#,
         "faults[0].death: expected one of the keys at, beacon, kind, to, found an unknown key"),
        (#"[{"kind": "rogue", "at": 10, "position": {"x": 5, "y": 1}, "major": 1, "minor": 1002}]"#,
         "faults[0].minor: expected an identity no scenario beacon has (a rogue is unknown), found E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 1.1002 again"),
        (#"[{"kind": "clone", "beacon": "door", "at": 10, "position": {"x": 5, "y": 1}, "address": "C0:00:00:00:00:01"}]"#,
         #"faults[0].address: expected an address no other beacon uses, found "C0:00:00:00:00:01" again"#),
        (#"[{"kind": "receiverOffline", "receiver": "east", "from": 10, "to": 10}]"#, #"faults[0].to: expected a time after "from" (10.0), found 10.0"#),
        (#"[{"kind": "move", "beacon": "shelf", "at": 10, "to": {"x": 5, "y": 1}}, {"kind": "receiverOffline", "receiver": "north", "from": 1, "to": 2}]"#,
         #"faults[1].receiver: expected the name of a receiver, found "north""#),
    ])
    func refusesWithPath(faults: String, message: String) {
        do {
            _ = try Scenario.decode(Data(faultScenario(faults).utf8))
            Issue.record("accepted \(faults)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func refusesTooManyFaults() {
        let many = "[" + Array(repeating: #"{"kind": "receiverOffline", "receiver": "east", "from": 1, "to": 2}"#, count: Scenario.faultLimit + 1)
            .joined(separator: ",") + "]"
        #expect(throws: ScenarioError(path: "faults", expected: "at most \(Scenario.faultLimit) faults", found: "\(Scenario.faultLimit + 1)")) {
            try Scenario.decode(Data(faultScenario(many).utf8))
        }
    }
}

@Suite struct ScenarioFaultEffectTests {
    static func run(_ faults: String, duration: Double = 600) throws -> (Scenario, [SimulatedSighting]) {
        let scenario = try Scenario.decode(Data(faultScenario(faults, duration: duration).utf8))
        var simulation = Simulation(scenario: scenario)
        return (scenario, simulation.run())
    }

    @Test func batteryFallsAlongItsCurveThenTheBeaconIsSilent() throws {
        let (scenario, sightings) = try Self.run(#"[{"kind": "batteryDeath", "beacon": "tag", "start": 60, "death": 400}]"#)
        let tag = scenario.beacons[0].address
        let telemetry = sightings.compactMap { item -> (Double, UInt16)? in
            guard item.sighting.address == tag, case .eddystone(.tlm(let tlm)) = item.sighting.frame else { return nil }
            return (item.sighting.time, tlm.batteryMillivolts)
        }
        #expect(telemetry.count > 50)
        guard case .batteryDeath(_, let discharge) = scenario.faults[0].kind else {
            Issue.record("the scenario's fault decoded as \(scenario.faults[0].kind), not a battery death")
            return
        }
        for (time, millivolts) in telemetry {
            #expect(abs(Double(millivolts) - discharge.millivolts(at: time)) <= 1, "at \(time)")
        }
        #expect(telemetry.first.map { $0.1 } == 3000)
        #expect(telemetry.last.map { $0.1 }! < 2150)
        let heard = sightings.filter { $0.sighting.address == tag }.map(\.sighting.time)
        #expect(heard.max()! < 400)
        // The other beacons carry on.
        #expect(sightings.contains { $0.sighting.address != tag && $0.sighting.time > 500 })
    }

    @Test func movedBeaconIsHeardFromItsNewPlace() throws {
        let (scenario, sightings) = try Self.run(#"[{"kind": "move", "beacon": "shelf", "at": 300, "to": {"x": 33, "y": 10}}]"#)
        let shelf = scenario.beacons[1].address
        func mean(_ receiver: String, _ range: Range<Double>) -> Double {
            let values = sightings.filter { $0.sighting.address == shelf && $0.sighting.receiver == receiver && range.contains($0.sighting.time) }
                .compactMap(\.sighting.rssi).map(Double.init)
            return values.reduce(0, +) / Double(max(1, values.count))
        }
        // From 4.5 m to 29 m of the west gateway, and the other way round for the east one.
        #expect(mean("west", 0..<300) - mean("west", 300..<600) > 12)
        #expect(mean("east", 300..<600) - mean("east", 0..<300) > 12)
        let after = sightings.first { $0.sighting.address == shelf && $0.sighting.time > 310 }
        #expect(after?.truth.beaconPosition == Position3D(x: 33, y: 10))
    }

    @Test func cloneSendsTheIdentityFromASecondAddressFromItsTime() throws {
        let (scenario, sightings) = try Self.run(
            #"[{"kind": "clone", "beacon": "door", "at": 200, "position": {"x": 6, "y": 12}}, {"kind": "rogue", "at": 100, "position": {"x": 20, "y": 10}, "major": 1, "minor": 1999}]"#)
        let door = scenario.beacons[2]
        let clone = scenario.beacons[3]
        #expect(clone.identity == door.identity && clone.address != door.address)
        let cloneTimes = sightings.filter { $0.sighting.address == clone.address }.map(\.sighting.time)
        #expect(cloneTimes.count > 100)
        #expect(cloneTimes.min()! >= 200)
        if case .iBeacon(let frame) = sightings.first(where: { $0.sighting.address == clone.address })?.sighting.frame {
            #expect(frame.identity == door.identity)
        } else {
            Issue.record("the clone sends no iBeacon")
        }
        // Near the west gateway, 30 m from the original.
        #expect(sightings.contains { $0.sighting.address == clone.address && $0.sighting.receiver == "west" })
        let rogueTimes = sightings.filter { $0.sighting.address == scenario.beacons[4].address }.map(\.sighting.time)
        #expect(rogueTimes.min()! >= 100)
    }

    @Test func offlineReceiverHearsNothing() throws {
        let (_, sightings) = try Self.run(#"[{"kind": "receiverOffline", "receiver": "west", "from": 100, "to": 250}]"#)
        let west = sightings.filter { $0.sighting.receiver == "west" }.map(\.sighting.time)
        #expect(!west.contains { (100..<250).contains($0) })
        #expect(west.contains { $0 < 100 } && west.contains { $0 >= 250 })
        #expect(sightings.contains { $0.sighting.receiver == "east" && (100..<250).contains($0.sighting.time) })
    }
}
