import BeaconFleet
import BeaconKit
import Foundation
import Testing

@Suite("Unregistered, out-of-place and cloned identities")
struct IdentityCheckTests {
    let registered = identity(1)

    func monitor(settings: FleetSettings = FleetSettings()) -> FleetMonitor {
        FleetMonitor(
            beacons: [FleetBeacon(identity: registered, label: "door", siteID: 1, position: Position(x: 5, y: 5),
                                  measuredPower: -59)],
            gateways: [FleetGateway(name: "lobby", siteID: 1, position: Position(x: 4, y: 4)),
                       FleetGateway(name: "far wing", siteID: 1, position: Position(x: 90, y: 5)),
                       FleetGateway(name: "other town", siteID: 2, position: Position(x: 5, y: 5))],
            organisationUUIDs: [organisationUUID], settings: settings)
    }

    @Test("an unknown identity under our UUID is reported with where it is strongest; others' beacons are ignored")
    func unregistered() {
        var fleet = monitor()
        let stranger = identity(77)
        fleet.observe(iBeaconSighting(stranger, at: 1, gateway: "lobby", rssi: -80, from: address(9)))
        fleet.observe(iBeaconSighting(stranger, at: 2, gateway: "far wing", rssi: -52, from: address(9)))
        fleet.observe(iBeaconSighting(identity(5, uuid: foreignUUID), at: 2, gateway: "lobby", from: address(8)))
        let transitions = fleet.evaluate(now: 3)
        #expect(transitions.filter { $0.check == .unregistered }.map(\.subject) == [.beacon(stranger)])
        let found = fleet.unregisteredIdentities
        #expect(found.map(\.identity) == [stranger])
        #expect(found.first?.nearestGateway?.name == "far wing")
        #expect(found.first?.nearestGateway?.rssi == -52)
        // Forgotten, with a cleared event, after its memory.
        let later = fleet.evaluate(now: 3 + FleetSettings().unregisteredMemory + 1)
        #expect(later.contains { $0.check == .unregistered && $0.to == .ok })
        #expect(fleet.unregisteredIdentities.isEmpty)
    }

    @Test("a rogue sending thousands of random minors raises one flood alert and stays bounded")
    func identityFlood() {
        var fleet = monitor()
        var generator = SplitMix64(seed: 3)
        for step in 0..<20_000 {
            let minor = UInt16.random(in: 0...UInt16.max, using: &generator)
            fleet.observe(iBeaconSighting(identity(minor, major: 9), at: Double(step) * 0.005, gateway: "lobby",
                                          rssi: -45, from: address(200)))
        }
        // A genuine new beacon elsewhere is still found during the flood.
        let newcomer = identity(4242, major: 2)
        fleet.observe(iBeaconSighting(newcomer, at: 99, gateway: "far wing", rssi: -70, from: address(201)))
        let transitions = fleet.evaluate(now: 100)
        let floods = transitions.filter { $0.check == .identityFlood }
        #expect(floods.map(\.subject) == [.gateway("lobby")])
        #expect(floods.first?.to == .alert)
        #expect(fleet.unregisteredIdentities.count <= FleetSettings().floodIdentities)
        #expect(fleet.unregisteredIdentities.contains { $0.identity == newcomer })
        // The flood stops: the alert clears.
        let after = fleet.evaluate(now: 400)
        #expect(after.contains { $0.check == .identityFlood && $0.to == .ok })
    }

    @Test("a fixed beacon heard strongly at another site is out of place")
    func outOfPlace() {
        var fleet = monitor()
        for second in 0..<5 {
            fleet.observe(iBeaconSighting(registered, at: Double(second), gateway: "other town", rssi: -55))
        }
        let transitions = fleet.evaluate(now: 5)
        let place = transitions.first { $0.check == .outOfPlace }
        #expect(place?.to == .alert)
        #expect(place?.reason.contains("other town") == true)
        // Weak sightings far away are only reflections: nothing.
        var quiet = monitor()
        for second in 0..<50 {
            quiet.observe(iBeaconSighting(registered, at: Double(second), gateway: "far wing", rssi: -92))
        }
        #expect(!quiet.evaluate(now: 50).contains { $0.check == .outOfPlace })
    }

    @Test("two addresses sending one identity at once is a clone; a rotating address is not")
    func cloneByAddress() {
        var fleet = monitor()
        for step in 0..<100 {
            let time = Double(step) * 0.1
            fleet.observe(iBeaconSighting(registered, at: time, gateway: "lobby", from: address(step % 2 == 0 ? 1 : 2)))
        }
        let clone = fleet.evaluate(now: 10).first { $0.check == .clone }
        #expect(clone?.to == .alert)
        #expect(clone?.reason.contains("same time") == true)

        var rotating = monitor()
        for step in 0..<3000 {
            let time = Double(step) * 0.1
            // A new address every 100 s, as a phone's private address rotates.
            rotating.observe(iBeaconSighting(registered, at: time, gateway: "lobby", from: address(UInt8(1 + step / 1000))))
        }
        #expect(!rotating.evaluate(now: 300).contains { $0.check == .clone })
    }

    @Test("one identity heard strongly by two gateways 86 m apart at once is a clone")
    func cloneByPlace() {
        var fleet = monitor()
        for step in 0..<20 {
            let time = Double(step) * 0.5
            fleet.observe(iBeaconSighting(registered, at: time, gateway: step % 2 == 0 ? "lobby" : "far wing", rssi: -50))
        }
        let clone = fleet.evaluate(now: 10).first { $0.check == .clone }
        #expect(clone?.to == .alert)
        #expect(clone?.reason.contains("far wing") == true)
    }

    @Test("a changed measured power warns; two powers interleaved are two transmitters")
    func measuredPower() {
        var changed = monitor()
        for step in 0..<20 {
            changed.observe(iBeaconSighting(registered, at: Double(step), gateway: "lobby", power: -65))
        }
        let warning = changed.evaluate(now: 20).first { $0.check == .clone }
        #expect(warning?.to == .warning)
        #expect(warning?.reason.contains("-65") == true)

        var interleaved = monitor()
        for step in 0..<20 {
            interleaved.observe(iBeaconSighting(registered, at: Double(step), gateway: "lobby", power: step % 2 == 0 ? -59 : -65))
        }
        #expect(interleaved.evaluate(now: 20).first { $0.check == .clone }?.to == .alert)
    }
}
