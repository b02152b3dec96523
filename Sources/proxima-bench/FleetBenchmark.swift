import BeaconFleet
import BeaconKit
import Foundation

/// Issue 12's cost goal: the fleet checks may add at most 10 % to the server's ingestion at
/// 10,000 beacons × 20 gateways. This measures the checks alone, per sighting and per
/// evaluation of the whole fleet, and the memory they hold; BENCHMARKS.md sets them beside the
/// ingestion figures.
enum FleetBenchmark {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func run() {
        let beaconCount = 10_000
        let gatewayCount = 20
        let before = residentBytes()
        let beacons = (0..<beaconCount).map { index in
            FleetBeacon(identity: BeaconIdentity(uuid: uuid, major: UInt16(index / 1000), minor: UInt16(index % 1000)),
                        label: "b\(index)", siteID: 1)
        }
        let gateways = (0..<gatewayCount).map { FleetGateway(name: "gw\($0)", siteID: 1) }
        var fleet = FleetMonitor(beacons: beacons, gateways: gateways, organisationUUIDs: [uuid])
        var generator = SplitMix64(seed: 12)
        // Each beacon is heard by the 4 gateways nearest to it along a line of 20.
        let pool = (0..<65_536).map { _ -> Sighting in
            let beacon = Int.random(in: 0..<beaconCount, using: &generator)
            let gateway = (beacon * gatewayCount / beaconCount + Int.random(in: 0..<4, using: &generator)) % gatewayCount
            return Sighting(time: 0, receiver: "gw\(gateway)", address: BluetoothAddress(rawValue: 0xC000_0000_0000 | UInt64(beacon)),
                            rssi: Int8(-60 - Int.random(in: 0..<30, using: &generator)),
                            frame: .iBeacon(IBeaconFrame(identity: beacons[beacon].identity)))
        }
        let gatewayIndex = (0..<gatewayCount).map { fleet.gatewayIndex(for: "gw\($0)")! }
        // An hour of traffic at 50,000 sightings/s: every link learnt, every drift detector watching.
        let sightings = 4_000_000
        let seconds = 3600.0
        var cpu = LocateBenchmark.threadCPUSeconds()
        for index in 0..<sightings {
            var sighting = pool[index & 65_535]
            sighting.time = Double(index) * seconds / Double(sightings)
            let gateway = Int(sighting.receiver.dropFirst(2))!
            fleet.observe(sighting, gateway: gatewayIndex[gateway])
        }
        cpu = LocateBenchmark.threadCPUSeconds() - cpu
        print(String(format: "observe: %d sightings, %d beacons × %d gateways, %.2f s CPU: %.0f sightings/s per core (%.2f µs each)",
                     sightings, beaconCount, gatewayCount, cpu, Double(sightings) / cpu, cpu / Double(sightings) * 1e6))
        let evaluations = 20
        cpu = LocateBenchmark.threadCPUSeconds()
        var transitions = 0
        for step in 0..<evaluations { transitions += fleet.evaluate(now: seconds + Double(step)).count }
        cpu = LocateBenchmark.threadCPUSeconds() - cpu
        print(String(format: "evaluate: whole fleet of %d beacons, %.1f ms each (%d transitions in %d runs)",
                     beaconCount, cpu / Double(evaluations) * 1000, transitions, evaluations))
        let held = residentBytes() - before
        print(String(format: "memory: %.1f MB resident for the fleet state, %.0f bytes per beacon", Double(held) / 1e6,
                     Double(held) / Double(beaconCount)))
        var byCheck: [String: Int] = [:]
        for beacon in fleet.report(now: seconds + Double(evaluations)) {
            for finding in beacon.findings { byCheck["\(finding.check.rawValue) \(finding.level.rawValue)", default: 0] += 1 }
        }
        // The traffic is random (uniform RSSI, random gateway order), so findings here are what the
        // checks make of noise; a sample of each says which.
        print("findings " + byCheck.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        print("states \(fleet.stateCounts().sorted { $0.key < $1.key }.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: " "))")
    }
}
