import BeaconKit
import BeaconLocate
import Foundation

/// A site survey taken in the simulator: a phone (or a tag) held still at every point of a
/// grid over the rooms for a few seconds, as a surveyor would, giving fingerprints and extra
/// calibration links. It is simulated as a separate run of the same venue and channel with its
/// own seed, so its shadowing and fading are not the evaluated walk's.
///
/// The simulator's shadowing belongs to each receiver–beacon link, not to places: a survey
/// captures path loss and walls, not the spot-by-spot shadowing a real survey would learn.
struct SimulatedSurvey {
    struct Link {
        var sumDecibels = 0.0
        var sumLinear = 0.0
        var count = 0
        var distance = 0.0

        var meanDecibels: Double { sumDecibels / Double(count) }
        /// The mean received power in dBm: fading averages out in linear power, not in dB.
        var meanPower: Double { 10 * log10(sumLinear / Double(count)) }
    }

    struct SurveyedSpot {
        var position: Position
        /// By anchor index (map beacon, or gateway for tags).
        var links: [Int: Link]
    }

    var points: [SurveyedSpot]

    var fingerprints: [SurveyPoint] {
        points.map { point in
            SurveyPoint(position: point.position,
                        readings: point.links.keys.sorted().map { Reading(beacon: $0, rssi: point.links[$0]!.meanDecibels) })
        }
    }

    static let maximumPoints = 2_000

    /// Grid points `spacing` apart inside the scenario's rooms (or the whole venue without
    /// rooms), the spacing widened until there are at most `maximumPoints`.
    static func grid(_ scenario: Scenario, spacing: Double) -> [Position] {
        var step = max(0.25, spacing)
        while true {
            var points: [Position] = []
            var y = step / 2
            while y < scenario.venue.height {
                var x = step / 2
                while x < scenario.venue.width {
                    let point = Position(x: x, y: y)
                    if scenario.rooms.isEmpty || scenario.rooms.contains(where: { $0.outline.contains(point) }) { points.append(point) }
                    x += step
                }
                y += step
            }
            if points.count <= maximumPoints { return points }
            step *= 1.5
        }
    }

    /// A phone at each grid point hearing the scenario's fixed beacons (`anchorIndex` maps a
    /// scenario beacon name to its map index).
    static func phones(_ scenario: Scenario, grid: [Position], height: Double, duration: Double,
                       anchorIndex: [String: Int]) -> SimulatedSurvey {
        var survey = scenario
        survey.seed = scenario.seed &+ 0x5EED
        survey.duration = duration
        survey.beacons = scenario.beacons.filter { $0.path == nil }
        survey.receivers = grid.enumerated().map { index, point in
            SimulatedReceiver(name: "survey \(index)", placement: .fixed(Position3D(x: point.x, y: point.y, z: height)), body: false)
        }
        survey.regions = []
        let receiverIndex = Dictionary(uniqueKeysWithValues: survey.receivers.enumerated().map { ($1.name, $0) })
        var points = grid.map { SurveyedSpot(position: $0, links: [:]) }
        var simulation = Simulation(scenario: survey)
        while let item = simulation.next() {
            guard let rssi = item.sighting.rssi, let row = receiverIndex[item.sighting.receiver],
                  let anchor = anchorIndex[item.truth.beacon] else { continue }
            points[row].links[anchor, default: Link()].add(Double(rssi), distance: item.truth.distance)
        }
        return SimulatedSurvey(points: points)
    }

    /// A tag at each grid point heard by the scenario's fixed receivers (`gateways`, in the
    /// order of the tags' anchor set), advertising as `tag` does but every half second.
    static func tags(_ scenario: Scenario, grid: [Position], like tag: SimulatedBeacon, height: Double, duration: Double,
                     gateways: [String]) -> SimulatedSurvey {
        var survey = scenario
        survey.seed = scenario.seed &+ 0x7A65
        survey.duration = duration
        survey.beacons = grid.enumerated().map { index, point in
            SimulatedBeacon(name: "survey \(index)", identity: BeaconIdentity(uuid: tag.identity.uuid, major: 65_535, minor: UInt16(index)),
                            address: BluetoothAddress(rawValue: 0xC1_00_00_00_00_00 | UInt64(index + 1)),
                            position: Position3D(x: point.x, y: point.y, z: height), measuredPower: tag.measuredPower,
                            txPower: tag.txPower, interval: 0.5)
        }
        let gatewayIndex = Dictionary(uniqueKeysWithValues: gateways.enumerated().map { ($1, $0) })
        survey.receivers = scenario.receivers.filter { gatewayIndex[$0.name] != nil }
        survey.regions = []
        var points = grid.map { SurveyedSpot(position: $0, links: [:]) }
        var simulation = Simulation(scenario: survey)
        while let item = simulation.next() {
            guard let rssi = item.sighting.rssi, let gateway = gatewayIndex[item.sighting.receiver],
                  let minor = item.sighting.frame.iBeacon?.identity.minor, Int(minor) < points.count else { continue }
            points[Int(minor)].links[gateway, default: Link()].add(Double(rssi), distance: item.truth.distance)
        }
        return SimulatedSurvey(points: points)
    }
}

extension SimulatedSurvey.Link {
    mutating func add(_ rssi: Double, distance: Double) {
        sumDecibels += rssi
        sumLinear += pow(10, rssi / 10)
        count += 1
        self.distance = distance
    }
}
