import BeaconKit
import BeaconLocate
import Foundation
import Testing

/// A particle filter kept by its caller (the per-subject state a server would hold), recovery
/// without a survey, and fingerprints that only say where a lost cloud should look.
@Suite struct ParticleStateTests {
    let map = FixtureFiles.twoRooms
    let model = PathLossModel(exponent: 2)

    /// Readings as the model with the map's walls predicts them at `spot`, with a little noise.
    func readings(at spot: Position, anchors: AnchorSet, generator: inout SplitMix64) -> [Reading] {
        FixtureFiles.readings(at: spot, anchors: anchors).map { reading in
            Reading(beacon: reading.beacon, rssi: reading.rssi - map.wallLoss(from: spot, to: map.beacons[reading.beacon].position)
                + Double.random(in: -3...3, using: &generator))
        }
    }

    /// A walk from the west room through the door into the east room, one scan a second.
    func walk() -> [(time: Double, spot: Position)] {
        (0..<30).map { second in
            let x = second < 5 ? 3.0 : min(17, 3 + 1.2 * Double(second - 5))
            return (Double(second), Position(x: x, y: 5))
        }
    }

    @Test func aFilterTheCallerKeepsTracksAsTheLocatorsOwn() {
        var own = ScanLocator(method: .particle, map: map, model: model, attenuatingWalls: true)
        let kept = ScanLocator(method: .particle, map: map, model: model, attenuatingWalls: true)
        var filter: ParticleFilter?
        var generator = SplitMix64(seed: 9)
        for step in walk() {
            let scan = readings(at: step.spot, anchors: own.anchors, generator: &generator)
            let fromOwn = own.locate(scan, receiver: "phone", at: step.time)
            let fromKept = kept.locate(scan, receiver: "phone", at: step.time, filter: &filter)
            #expect(fromOwn == fromKept, "at \(step.time) s")
        }
        #expect(filter != nil)
        // The caller's filter is the only state: the locator it ran on tracked nobody.
        #expect(kept.particleMass(of: "phone", rooms: map.rooms) == nil)
        // Other methods have no filter to keep.
        var unused: ParticleFilter?
        #expect(ScanLocator(method: .trilateration, map: map, model: model).locate([Reading(beacon: 0, rssi: -60)], receiver: "x", at: 0, filter: &unused) == nil)
        #expect(unused == nil)
    }

    /// A server rebuilds its locators at each refit of the calibration; the filter it keeps
    /// takes the new locator's anchors at the next scan and goes on from where its cloud was,
    /// where a filter started afresh would begin again from a weighted centroid.
    @Test func aKeptFilterTakesARebuiltLocatorsCalibration() throws {
        let before = ScanLocator(method: .particle, map: map, model: model, attenuatingWalls: true)
        let refitted = PathLossModel(exponent: 2.3, defaultPower: -61)
        let after = ScanLocator(method: .particle, map: map, model: refitted, attenuatingWalls: true)
        var filter: ParticleFilter?
        var generator = SplitMix64(seed: 11)
        let steps = walk()
        for step in steps.prefix(15) {
            _ = before.locate(readings(at: step.spot, anchors: before.anchors, generator: &generator), receiver: "phone", at: step.time, filter: &filter)
        }
        #expect(filter?.anchors == before.anchors)
        var fresh: ParticleFilter?
        let scan = readings(at: steps[15].spot, anchors: after.anchors, generator: &generator)
        var continued = filter
        let kept = try #require(after.locate(scan, receiver: "phone", at: steps[15].time, filter: &continued))
        _ = after.locate(scan, receiver: "phone", at: steps[15].time, filter: &fresh)
        #expect(continued?.anchors == after.anchors)
        #expect(continued?.anchors.model == refitted)
        // The same scan through a filter with the same anchors from the start: only the
        // cloud's history differs, so the kept filter was moved on, not replaced.
        #expect(continued != fresh)
        #expect(kept.position.distance(to: steps[15].spot) < 3, "\(kept.position)")
    }

    @Test func aDeciderWithTheCallersParticlesDecidesAsWithItsOwn() {
        let configuration = RoomDecider.Configuration.tags.scaled(particles: 200, signalCells: 100)
        var own = RoomDecider(map: map, model: model, configuration: configuration)
        var kept = RoomDecider(map: map, model: model, configuration: configuration)
        #expect(own.usesParticles && kept.usesParticles)
        var ownTrack: RoomFilter.Track?, keptTrack: RoomFilter.Track?
        var particles: ParticleFilter?
        var ownRooms: [String] = [], keptRooms: [String] = []
        var generator = SplitMix64(seed: 4)
        let anchors = AnchorSet(map: map, model: model, attenuatingWalls: true)
        for step in walk() {
            let scan = readings(at: step.spot, anchors: anchors, generator: &generator)
            let ownDecision = own.decide(&ownTrack, subject: "tag", readings: scan, receiver: "tag", time: step.time)
            let keptDecision = kept.decide(&keptTrack, particles: &particles, subject: "tag", readings: scan, receiver: "tag", time: step.time)
            ownRooms += ownDecision.events.filter { $0.kind == .enter }.map(\.room)
            keptRooms += keptDecision.events.filter { $0.kind == .enter }.map(\.room)
            #expect(ownDecision.fixes[.particle] == keptDecision.fixes[.particle], "at \(step.time) s")
        }
        #expect(ownRooms == ["west", "east"], "\(ownRooms)")
        #expect(keptRooms == ownRooms)
        #expect(particles?.configuration.particles == 200)
    }

    /// Two rooms with no door: without a survey a cloud held west of the wall finds the east
    /// room through robust trilateration's fix.
    @Test func withoutASurveyTrilaterationFindsALostCloud() {
        var sealed = map
        sealed.walls = [MapWall(from: Position(x: 10, y: -1), to: Position(x: 10, y: 11), attenuation: 6)]
        sealed.doors = []
        var locator = ScanLocator(method: .particle, map: sealed, model: model, attenuatingWalls: true)
        var generator = SplitMix64(seed: 2)
        var last: Fix?
        for second in 0..<25 {
            let spot = second < 10 ? Position(x: 4, y: 5) : Position(x: 16, y: 5)
            let scan = FixtureFiles.readings(at: spot, anchors: locator.anchors).map { reading in
                Reading(beacon: reading.beacon, rssi: reading.rssi - sealed.wallLoss(from: spot, to: sealed.beacons[reading.beacon].position)
                    + Double.random(in: -2...2, using: &generator))
            }
            last = locator.locate(scan, receiver: "tag", at: Double(second)) ?? last
            if second == 9 { #expect(last.map { $0.position.x < 10 } == true, "\(String(describing: last))") }
        }
        #expect(last.map { $0.position.x > 10 && $0.position.distance(to: Position(x: 16, y: 5)) < 2.5 } == true, "\(String(describing: last))")
    }

    /// A survey whose fingerprints sit `shift` metres north of where they were taken: weighed
    /// every scan they drag the cloud north; kept for recovery only they change nothing while
    /// the cloud tracks.
    @Test func fingerprintsForRecoveryOnlyDoNotPullATrackingCloud() {
        let weighedTrue = meanNorthError(surveyShift: 0, fingerprintsWeigh: true)
        let weighedShifted = meanNorthError(surveyShift: 5, fingerprintsWeigh: true)
        #expect(weighedShifted - weighedTrue > 2, "weighed by the fingerprints: \(weighedTrue) m north with a true survey, \(weighedShifted) m with one 5 m off")
        let recoveryTrue = meanNorthError(surveyShift: 0, fingerprintsWeigh: false)
        let recoveryShifted = meanNorthError(surveyShift: 5, fingerprintsWeigh: false)
        #expect(abs(recoveryShifted - recoveryTrue) < 1e-9, "recovery only: \(recoveryTrue) m and \(recoveryShifted) m")
        #expect(abs(recoveryTrue) < 1, "\(recoveryTrue)")
    }

    /// The particle filter's mean error northwards over a walk in the west room, after 10 s.
    func meanNorthError(surveyShift: Double, fingerprintsWeigh: Bool) -> Double {
        let anchors = AnchorSet(map: map, model: model, attenuatingWalls: true)
        var generator = SplitMix64(seed: 5)
        let survey = stride(from: 1.0, through: 19.0, by: 1.5).flatMap { x in
            stride(from: 1.0, through: 9.0, by: 1.5).map { y -> SurveyPoint in
                SurveyPoint(position: Position(x: x, y: min(10, y + surveyShift)), readings: readings(at: Position(x: x, y: y), anchors: anchors, generator: &generator))
            }
        }
        var locator = ScanLocator(method: .particle, map: map, model: model, survey: survey, attenuatingWalls: true, fingerprintsWeighParticles: fingerprintsWeigh)
        #expect(locator.fingerprintsWeighParticles == fingerprintsWeigh)
        var north = 0.0, counted = 0
        for second in 0..<40 {
            let spot = Position(x: 3 + 4 * Double(second % 10) / 10, y: 3)
            guard let fix = locator.locate(readings(at: spot, anchors: anchors, generator: &generator), receiver: "phone", at: Double(second)),
                  second >= 10 else { continue }
            north += fix.position.y - spot.y
            counted += 1
        }
        return north / Double(max(1, counted))
    }
}
