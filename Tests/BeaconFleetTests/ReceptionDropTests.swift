import BeaconFleet
import BeaconKit
import Foundation
import Testing

/// A beacon moved out of a gateway's range is heard there rarely, not weakly (the weak packets fall
/// under the sensitivity), so drift watches a fixed link's packets per minute as well as its level.
@Suite("Reception drop")
struct ReceptionDropTests {
    let tag = identity(1001)

    func monitor() -> FleetMonitor {
        FleetMonitor(beacons: [FleetBeacon(identity: tag, label: "tag", siteID: 1)],
                     gateways: [FleetGateway(name: "g", siteID: 1), FleetGateway(name: "h", siteID: 1)],
                     organisationUUIDs: [organisationUUID])
    }

    func heard(by gateway: String, from start: Double, to end: Double, reception: Double, generator: inout SplitMix64) -> [Sighting] {
        Transmission(identity: tag, interval: 0.5, gateways: [gateway], reception: reception, rssi: -80, noise: 4)
            .sightings(from: start, to: end, generator: &generator)
    }

    @Test("a link falling from 36 to 2 packets a minute at the same level is drift within 20 minutes")
    func fallIsFound() {
        var generator = SplitMix64(seed: 21)
        var fleet = monitor()
        let change = 7200.0
        let sightings = heard(by: "g", from: 0, to: change, reception: 0.3, generator: &generator)
            + heard(by: "g", from: change, to: change + 3600, reception: 0.02, generator: &generator)
            + heard(by: "h", from: 0, to: change + 3600, reception: 0.3, generator: &generator)
        let transitions = run(&fleet, sightings: sightings, from: 0, to: change + 3600, reporting: { _ in ["g", "h"] }, step: 10)
        let drift = transitions.filter { $0.check == .drift }
        #expect(drift.first?.to == .warning)
        if let found = drift.first {
            #expect(found.time > change && found.time < change + 1200, "found at \(found.time - change) s")
            #expect(found.reason.contains("g hears it") && found.reason.contains("moved or obstructed"), "\(found.reason)")
        }
        #expect(!transitions.contains { $0.check == .missing && $0.to >= .warning })
    }

    @Test("a gateway outage, and a day of steady reception, are not a fall")
    func outageIsNotAFall() {
        var generator = SplitMix64(seed: 22)
        var fleet = monitor()
        let outage = 7200.0..<10_800.0
        let sightings = heard(by: "g", from: 0, to: outage.lowerBound, reception: 0.3, generator: &generator)
            + heard(by: "g", from: outage.upperBound, to: 86_400, reception: 0.3, generator: &generator)
            + heard(by: "h", from: 0, to: 86_400, reception: 0.3, generator: &generator)
        let transitions = run(&fleet, sightings: sightings, from: 0, to: 86_400,
                              reporting: { outage.contains($0) ? ["h"] : ["g", "h"] }, step: 30)
        let raised = transitions.filter { $0.to >= .warning }
        #expect(raised.isEmpty, "\(raised)")
    }
}
