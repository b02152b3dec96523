import BeaconKit
import BeaconLocate
import BeaconServer
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
        for beacons in [100, 1_000] { refitDeciders(beacons: beacons) }
    }

    /// Each refit also rebuilds the site's room deciders with the new calibration: on a floor of
    /// 100 m × 40 m, 20 rooms and 40 walls, the phones' decider over `beacons` fixed beacons and
    /// the carried beacons' decider over 10 gateways, from scratch (the map's wall losses
    /// tabulated again) and with the wall tables of the deciders they replace.
    static func refitDeciders(beacons: Int) {
        var generator = SplitMix64(seed: 5)
        let width = 100.0, height = 40.0
        var rooms: [Room] = [], walls: [MapWall] = [], doors: [Door] = []
        for index in 0..<20 {
            let left = Double(index % 10) * 10, bottom = index < 10 ? 0.0 : 20.0
            rooms.append(Room(name: "room \(index)", outline: Polygon([Position(x: left, y: bottom), Position(x: left + 10, y: bottom),
                                                                      Position(x: left + 10, y: bottom + 20), Position(x: left, y: bottom + 20)])))
            walls.append(MapWall(from: Position(x: left, y: bottom), to: Position(x: left, y: bottom + 9)))
            walls.append(MapWall(from: Position(x: left, y: bottom + 11), to: Position(x: left, y: bottom + 20)))
            doors.append(Door(name: "door \(index)", position: Position(x: left, y: bottom + 10)))
        }
        let fixed = (0..<beacons).map { index in
            MappedBeacon(id: "b\(index)", position: Position(x: Double.random(in: 0...width, using: &generator), y: Double.random(in: 0...height, using: &generator)),
                         measuredPower: -59)
        }
        let gateways = (0..<10).map { MappedBeacon(id: "gw-\($0)", position: Position(x: 5 + Double($0) * 10, y: $0 % 2 == 0 ? 10 : 30), measuredPower: -59) }
        let phonesMap = SiteMap(name: "large", width: width, height: height, walls: walls, rooms: rooms, doors: doors, beacons: fixed)
        let tagsMap = SiteMap(name: "large", width: width, height: height, walls: walls, rooms: rooms, doors: doors, beacons: gateways)
        let configuration = SiteTracker.Configuration()
        let clock = ContinuousClock()
        var began = clock.now
        let phones = RoomDecider(map: phonesMap, model: PathLossModel(), configuration: configuration.phoneRooms)
        let tags = RoomDecider(map: tagsMap, model: PathLossModel(), configuration: configuration.beaconRooms)
        let scratch = began.duration(to: clock.now).seconds
        began = clock.now
        let refitModel = PathLossModel(exponent: 2.3)
        _ = RoomDecider(map: phonesMap, model: refitModel, configuration: configuration.phoneRooms, wallLosses: phones.wallLosses)
        _ = RoomDecider(map: tagsMap, model: refitModel, configuration: configuration.beaconRooms, wallLosses: tags.wallLosses)
        let kept = began.duration(to: clock.now).seconds
        print(String(format: "a refit's room deciders, %d fixed beacons and 10 gateways on 20 rooms and 40 walls: %.1f ms from scratch, %.1f ms with the wall tables kept",
                     beacons, scratch * 1000, kept * 1000))
    }
}
