import BeaconKit
import BeaconLocate
import Foundation

/// Issue 10's self-calibration at large sites: one `SiteCalibrator.fit()` (ten robust
/// reweighting steps) over fixed beacons heard by fixed gateways, every beacon by every gateway
/// within 30 m, one median reading per link. A server refits each site's calibration inside the
/// batch that passes the refit interval, so this is the pause that batch sees. The floor is
/// 700 m² per gateway, so a beacon has about four gateways within 30 m.
enum CalibrationBenchmark {
    static let sites: [(beacons: Int, gateways: Int)] = [(100, 10), (1_000, 10), (1_480, 10), (1_000, 100), (5_000, 10), (400, 500)]

    static func run() throws {
        let clock = ContinuousClock()
        for site in sites {
            var generator = SplitMix64(seed: 17)
            let width = (700 * Double(site.gateways)).squareRoot(), height = width
            func spot() -> Position { Position(x: Double.random(in: 0...width, using: &generator), y: Double.random(in: 0...height, using: &generator)) }
            let beacons = (0..<site.beacons).map { _ in spot() }
            let gateways = (0..<site.gateways).map { _ in spot() }
            var calibrator = SiteCalibrator(priors: .fixedLinks)
            for (b, beacon) in beacons.enumerated() {
                for (g, gateway) in gateways.enumerated() {
                    let distance = max(0.5, hypot(beacon.x - gateway.x, beacon.y - gateway.y))
                    guard distance <= 30 else { continue }
                    let noise = Double.random(in: -4...4, using: &generator)
                    calibrator.add(beacon: "b\(b)", receiver: "g\(g)", distance: distance, rssi: -59 - 22 * log10(distance) + noise)
                }
            }
            let began = clock.now
            let fitted = calibrator.fit()
            let seconds = began.duration(to: clock.now).seconds
            print(String(format: "%d beacons × %d gateways, %d links: fit %.1f ms (exponent %@)", site.beacons, site.gateways, calibrator.linkCount,
                         seconds * 1000, fitted.map { String(format: "%.2f", $0.exponent) } ?? "none: over the bound"))
        }
    }
}
