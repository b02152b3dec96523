import BeaconFleet
import BeaconKit
import Foundation
import Testing

@Suite("Missing beacons")
struct MissingCheckTests {
    let fast = identity(1)
    let slow = identity(2)

    func monitor() -> FleetMonitor {
        FleetMonitor(beacons: [FleetBeacon(identity: fast, label: "fast", siteID: 1),
                               FleetBeacon(identity: slow, label: "slow", siteID: 1)],
                     gateways: ["a", "b", "c"].map { FleetGateway(name: $0, siteID: 1) },
                     organisationUUIDs: [organisationUUID])
    }

    @Test("a beacon heard often is missing after seconds; one heard twice a minute is not")
    func thresholdFollowsRate() {
        var fleet = monitor()
        var generator = SplitMix64(seed: 7)
        // fast: 10 Hz, heard by three gateways half the time; it dies at 3600 s.
        var sightings = Transmission(identity: fast, interval: 0.1, gateways: ["a", "b", "c"], reception: 0.5)
            .sightings(from: 0, to: 3600, generator: &generator)
        // slow: one event every 30 s, heard by one gateway; alive throughout.
        sightings += Transmission(identity: slow, interval: 30, gateways: ["a"], reception: 0.9)
            .sightings(from: 0, to: 7200, generator: &generator)
        let transitions = run(&fleet, sightings: sightings, from: 0, to: 7200, reporting: { _ in ["a", "b", "c"] })
        let missing = transitions.filter { $0.check == .missing && $0.to == .alert }
        #expect(missing.count == 1, "alerts: \(missing.map { "\($0.subject) \($0.time)" })")
        #expect(missing.first?.subject == .beacon(fast))
        let fastHealth = fleet.health(of: fast, now: 7200)
        let threshold = try? #require(fastHealth?.missingAfter)
        #expect((threshold ?? 0) < 30, "a 15 packets/s beacon is missing within seconds")
        if let alert = missing.first, let threshold {
            // Evaluated every second: the alert comes within a second of the threshold.
            #expect(alert.time - 3600 >= threshold - 1 && alert.time - 3600 <= 2 * threshold)
        }
        let slowThreshold = fleet.health(of: slow, now: 7200)?.missingAfter ?? 0
        #expect(slowThreshold > 300, "twice a minute: silence of minutes is normal, threshold \(slowThreshold)")
    }

    @Test("a silent gateway makes its beacons unknown, not missing; a beacon that died meanwhile is found after")
    func gatewayOutage() {
        var fleet = monitor()
        var generator = SplitMix64(seed: 11)
        // Gateway "a" is the only one that hears them; it goes offline 3000–4000 s. The fast
        // beacon dies at 3500 s, during the outage.
        var sightings = Transmission(identity: fast, interval: 0.1, gateways: ["a"], reception: 0.6)
            .sightings(from: 0, to: 3000, generator: &generator)
        sightings += Transmission(identity: slow, interval: 1, gateways: ["a"], reception: 0.9)
            .sightings(from: 0, to: 3000, generator: &generator)
        sightings += Transmission(identity: slow, interval: 1, gateways: ["a"], reception: 0.9)
            .sightings(from: 4000, to: 6000, generator: &generator)
        let transitions = run(&fleet, sightings: sightings, from: 0, to: 6000,
                              reporting: { now in now >= 3000 && now < 4000 ? ["b"] : ["a", "b"] })
        let duringOutage = transitions.filter { $0.time > 3000 && $0.time < 4000 && $0.check == .missing }
        #expect(duringOutage.allSatisfy { $0.to == .unknown }, "\(duringOutage)")
        #expect(duringOutage.count == 2, "both beacons become unknown")
        let alerts = transitions.filter { $0.check == .missing && $0.to == .alert }
        #expect(alerts.map(\.subject) == [.beacon(fast)], "only the dead one: \(alerts)")
        if let alert = alerts.first {
            #expect(alert.time > 4000 && alert.time < 4030, "found soon after the gateway returned: \(alert.time)")
        }
    }

    @Test("the threshold is the Poisson bound times the safety factor")
    func thresholdFormula() {
        let fleet = monitor()
        let rate = 10.0
        let bound = log(3600 * rate / 1e-4) / rate
        #expect(abs(fleet.silenceThreshold(rate: rate) - max(10, 2 * bound)) < 1e-9)
        #expect(fleet.silenceThreshold(rate: 0.01) > fleet.silenceThreshold(rate: 0.1))
        #expect(fleet.silenceThreshold(rate: 0) == .infinity)
    }

    @Test("a phone that walks away is not the beacon going missing")
    func movingGatewaysDoNotSetCoverage() {
        var fleet = FleetMonitor(beacons: [FleetBeacon(identity: fast, label: "fast", siteID: 1)],
                                 gateways: [FleetGateway(name: "phone", siteID: 1, isFixed: false)],
                                 organisationUUIDs: [organisationUUID])
        var generator = SplitMix64(seed: 17)
        let sightings = Transmission(identity: fast, interval: 0.1, gateways: ["phone"], reception: 0.5)
            .sightings(from: 0, to: 1800, generator: &generator)
        let transitions = run(&fleet, sightings: sightings, from: 0, to: 2400, reporting: { _ in ["phone"] }, step: 5)
        #expect(!transitions.contains { $0.check == .missing && $0.to == .alert })
        #expect(fleet.health(of: fast, now: 2400)?.heardBy.first?.expected == false)
    }
}
