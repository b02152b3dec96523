import BeaconKit
import BeaconLocate
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Issue 10's speed goals, on one core: robust trilateration with 8 beacons in view (goal
/// ≥ 200,000 fixes/s) and particle-filter updates with 1,000 particles (goal ≥ 2,000/s). The
/// site is a 40 m × 20 m floor with 8 beacons on its walls and noisy readings from random spots.
enum LocateBenchmark {
    static func site() -> (SiteMap, AnchorSet) {
        let spots = [(0.5, 0.5), (20.0, 0.5), (39.5, 0.5), (39.5, 10.0), (39.5, 19.5), (20.0, 19.5), (0.5, 19.5), (0.5, 10.0)]
        let beacons = spots.enumerated().map { MappedBeacon(id: "b\($0.offset)", position: Position(x: $0.element.0, y: $0.element.1), measuredPower: -59) }
        let map = SiteMap(width: 40, height: 20, walls: [MapWall(from: Position(x: 20, y: 0), to: Position(x: 20, y: 8))], beacons: beacons)
        return (map, AnchorSet(map: map, model: PathLossModel(exponent: 2.3)))
    }

    static func scans(_ count: Int, anchors: AnchorSet) -> [[Reading]] {
        var generator = SplitMix64(seed: 10)
        return (0..<count).map { _ in
            let x = Double.random(in: 0...40, using: &generator), y = Double.random(in: 0...20, using: &generator)
            return anchors.xs.indices.map { index in
                let dx = x - anchors.xs[index], dy = y - anchors.ys[index]
                return Reading(beacon: index, rssi: anchors.model.expectedRSSI(power: anchors.powers[index], squaredDistance: dx * dx + dy * dy)
                    + Double.random(in: -6...6, using: &generator))
            }
        }
    }

    static func threadCPUSeconds() -> Double {
        var usage = rusage()
        // RUSAGE_THREAD (1 on Linux) is not exported by Glibc's Swift overlay.
        getrusage(__rusage_who_t(1), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func run() {
        let (map, anchors) = site()
        let readings = scans(4096, anchors: anchors)
        let trilateration = RobustTrilateration(anchors: anchors)
        var checksum = 0.0
        let fixes = 400_000
        var cpu = threadCPUSeconds()
        for index in 0..<fixes { checksum += trilateration.locate(readings[index & 4095])?.position.x ?? 0 }
        cpu = threadCPUSeconds() - cpu
        print(String(format: "trilateration: %d fixes, 8 beacons in view, %.2f s CPU: %.0f fixes/s per core (goal ≥ 200000)", fixes, cpu, Double(fixes) / cpu))

        var filter = ParticleFilter(anchors: anchors, walls: map.walls, configuration: .init(particles: 1000))
        let updates = 4000
        cpu = threadCPUSeconds()
        for index in 0..<updates { checksum += filter.update(readings[index & 4095], at: Double(index))?.position.y ?? 0 }
        cpu = threadCPUSeconds() - cpu
        print(String(format: "particle filter: %d updates, 1000 particles, 8 beacons, 1 wall, %.2f s CPU: %.0f updates/s per core (goal ≥ 2000)", updates, cpu, Double(updates) / cpu))
        print("checksum \(checksum.isFinite)")
    }
}
