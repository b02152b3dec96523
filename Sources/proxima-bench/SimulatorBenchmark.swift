import BeaconKit
import BeaconSimulator
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Issue 5's speed claim: a 1,000-beacon venue with 10 receivers simulates at least 100 times
/// faster than real time on one core. The venue is a 200 m × 200 m exhibition hall with a
/// beacon every ~6.3 m, booth walls, 2 fixed gateways and 8 walkers crossing it.
enum SimulatorBenchmark {
    static func venue(beacons count: Int = 1000, receivers receiverCount: Int = 10, duration: Double) -> Scenario {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let side = Int(Double(count).squareRoot().rounded(.up))
        let spacing = 200.0 / Double(side)
        let beacons = (0..<count).map { (index: Int) -> SimulatedBeacon in
            let column = Double(index % side), row = Double(index / side)
            let position = Position3D(x: spacing * (column + 0.5), y: spacing * (row + 0.5), z: 2.5)
            let identity = BeaconIdentity(uuid: uuid, major: UInt16(index / 100), minor: UInt16(index))
            return SimulatedBeacon(name: "booth \(index)", identity: identity,
                                   address: BluetoothAddress(rawValue: 0xC0_00_00_00_00_00 + UInt64(index + 1)),
                                   position: position, measuredPower: MeasuredPower(-63), txPower: -4)
        }
        // Booth back walls every 20 m.
        let walls = stride(from: 20.0, to: 200, by: 20).flatMap { position in
            [Wall(from: Position3D(x: position, y: 10), to: Position3D(x: position, y: 90), attenuation: 5),
             Wall(from: Position3D(x: position, y: 110), to: Position3D(x: position, y: 190), attenuation: 5)]
        }
        var receivers: [SimulatedReceiver] = [
            SimulatedReceiver(name: "gateway west", placement: .fixed(Position3D(x: 50, y: 100, z: 3))),
            SimulatedReceiver(name: "gateway east", placement: .fixed(Position3D(x: 150, y: 100, z: 3))),
        ]
        for walker in 0..<max(0, receiverCount - 2) {
            let y = 15 + Double(walker) * 22
            receivers.append(SimulatedReceiver(name: "visitor \(walker + 1)", placement: .walking(WalkerPath(
                waypoints: [.init(Position3D(x: 5, y: y, z: 1.2), pause: 10), .init(Position3D(x: 195, y: 200 - y, z: 1.2), pause: 30)],
                speed: 1.2, loop: true, start: Double(walker) * 3))))
        }
        return Scenario(name: "exhibition hall", seed: 1000, duration: duration, venue: Venue(width: 200, height: 200, walls: walls),
                        channel: ChannelModel(pathLossExponent: 2.5), beacons: beacons, receivers: Array(receivers.prefix(receiverCount)))
    }

    static func run() async throws {
        let duration = 300.0
        let scenario = venue(duration: duration)
        // Warm up caches and the allocator on a short run first.
        var warmUp = Simulation(scenario: venue(duration: 5))
        while warmUp.next() != nil {}

        let clock = ContinuousClock()
        var simulation = Simulation(scenario: scenario)
        var sightings = 0
        let cpuStart = simulatorThreadCPUSeconds()
        let elapsed = clock.measure {
            while simulation.next() != nil { sightings += 1 }
        }
        let cpu = simulatorThreadCPUSeconds() - cpuStart
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let statistics = simulation.statistics
        print("venue: \(scenario.beacons.count) beacons, \(scenario.receivers.count) receivers, \(Int(duration)) simulated s")
        print("advertising events: \(statistics.advertisingEvents), sightings: \(sightings), collided: \(statistics.collided) (\(String(format: "%.2f", 100 * statistics.collisionRate)) % of receivable)")
        print(String(format: "thread CPU time: %.3f s -> %.0fx real time on one core; wall time %.3f s (%.0fx; lower when other processes share the cores)",
                     cpu, duration / cpu, wall, duration / wall))
        print(String(format: "%.0f sightings and %.0f advertising events per CPU second", Double(sightings) / cpu, Double(statistics.advertisingEvents) / cpu))
        print(duration / cpu >= 100 ? "claim (>= 100x real time on one core): met" : "claim (>= 100x real time on one core): NOT met")
    }
}

/// CPU time of the calling thread: what "on one core" means when other processes share the
/// machine and stretch wall time.
private func simulatorThreadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}
