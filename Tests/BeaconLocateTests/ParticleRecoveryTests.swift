import BeaconKit
import BeaconLocate
import Foundation
import Testing

/// A particle filter whose cloud is held in a room by its walls while the target is elsewhere
/// (the "kidnapped" filter of docs/evaluation.md, eighth round) redraws part of the cloud
/// around the position hint; a filter that is tracking never does.
@Suite struct ParticleRecoveryTests {
    /// Two rooms split by a wall with no door: a cloud in one can never walk into the other.
    /// The wall runs past the floor's edges (`aWallEndingOnTheFloorsEdgeHoldsTheCloud` has one
    /// that ends on them).
    static let map = SiteMap(name: "sealed", width: 20, height: 10,
                             walls: [MapWall(from: Position(x: 10, y: -1), to: Position(x: 10, y: 11), attenuation: 6)],
                             beacons: [(1.0, 1.0), (1.0, 9.0), (9.0, 5.0), (11.0, 5.0), (19.0, 1.0), (19.0, 9.0)].enumerated().map {
                                 MappedBeacon(id: "b\($0.offset)", position: Position(x: $0.element.0, y: $0.element.1), measuredPower: -59)
                             })
    static let anchors = AnchorSet(map: map, model: PathLossModel(exponent: 2), attenuatingWalls: true)

    /// The model's own readings at `spot`, walls included.
    static func readings(at spot: Position) -> [Reading] {
        map.beacons.indices.map { index in
            let beacon = map.beacons[index].position
            let dx = spot.x - beacon.x, dy = spot.y - beacon.y
            return Reading(beacon: index, rssi: anchors.model.expectedRSSI(power: anchors.powers[index], squaredDistance: dx * dx + dy * dy)
                - map.wallLoss(from: spot, to: beacon))
        }
    }

    /// Settles a filter in the west room, then moves the target east (and the hint with it).
    static func track(hint: Bool) -> (fixes: [Fix], recoveries: Int) {
        var filter = ParticleFilter(anchors: anchors, walls: map.walls)
        let west = Position(x: 4, y: 5), east = Position(x: 16, y: 5)
        var fixes: [Fix] = []
        for second in 0..<20 {
            let spot = second < 10 ? west : east
            let positionHint = hint ? Fix(position: spot, uncertainty: 1, method: .fingerprint) : nil
            if let fix = filter.update(readings(at: spot), at: Double(second), positionHint: positionHint) { fixes.append(fix) }
        }
        return (fixes, filter.recoveries)
    }

    @Test func aLostCloudIsRedrawnAroundTheHint() throws {
        let plain = Self.track(hint: false)
        // Without a hint the cloud cannot cross the wall: the filter stays lost.
        #expect(plain.fixes.count == 20 && plain.fixes.last!.position.x < 10, "\(plain.fixes.last!)")
        #expect(plain.recoveries == 0)
        let hinted = Self.track(hint: true)
        #expect(hinted.recoveries >= 1)
        // In the west room it tracked; a few scans after the move it is east and stays there.
        #expect(hinted.fixes[9].position.x < 10)
        for fix in hinted.fixes[14...] { #expect(fix.position.x > 10 && fix.position.distance(to: Position(x: 16, y: 5)) < 2, "\(fix)") }
    }

    /// The same two rooms with the wall drawn exactly from edge to edge, as office.json's
    /// partitions are: particles pressed against the floor's edge must not slip past its ends.
    @Test func aWallEndingOnTheFloorsEdgeHoldsTheCloud() {
        var map = Self.map
        map.walls = [MapWall(from: Position(x: 10, y: 0), to: Position(x: 10, y: 10), attenuation: 6)]
        let anchors = AnchorSet(map: map, model: PathLossModel(exponent: 2), attenuatingWalls: true)
        var filter = ParticleFilter(anchors: anchors, walls: map.walls)
        let eastRoom = [Polygon([Position(x: 10, y: 0), Position(x: 20, y: 0), Position(x: 20, y: 10), Position(x: 10, y: 10)])]
        for second in 0..<10 { _ = filter.update(Self.readings(at: Position(x: 3, y: 5)), at: Double(second)) }
        // The first scan scatters the cloud without regard to walls; settled, none is east.
        #expect(filter.mass(in: eastRoom)[0] == 0)
        // Long enough for the pull of the east readings to press the cloud into the corners.
        var last: Fix?
        for second in 10..<60 {
            last = filter.update(Self.readings(at: Position(x: 16, y: 5)), at: Double(second)) ?? last
            let leaked = filter.mass(in: eastRoom)[0]
            #expect(leaked == 0, "second \(second): \(leaked) of the weight east of the wall")
        }
        #expect(last.map { $0.position.x < 10 } == true, "\(String(describing: last))")
    }

    @Test func aTrackingFilterIsNeverRedrawn() {
        var filter = ParticleFilter(anchors: Self.anchors, walls: Self.map.walls)
        var generator = SplitMix64(seed: 3)
        // A walk along the west room with noisy readings and a hint a metre off: never lost.
        for second in 0..<60 {
            let spot = Position(x: 2 + 6 * Double(second % 20) / 20, y: 5 + 2 * sin(Double(second) / 5))
            let noisy = Self.readings(at: spot).map { Reading(beacon: $0.beacon, rssi: $0.rssi + Double.random(in: -4...4, using: &generator)) }
            let hint = Fix(position: Position(x: spot.x + 0.7, y: spot.y - 0.7), uncertainty: 1.5, method: .fingerprint)
            _ = filter.update(noisy, at: Double(second), positionHint: hint)
        }
        #expect(filter.recoveries == 0)
    }
}
