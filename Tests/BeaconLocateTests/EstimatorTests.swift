import BeaconKit
import BeaconLocate
import Foundation
import Testing

@Suite struct EstimatorTests {
    let map = FixtureFiles.twoRooms
    var anchors: AnchorSet { AnchorSet(map: map, model: PathLossModel(exponent: 2.2)) }

    @Test func trilaterationFindsTheExactPointFromExactReadings() throws {
        let truth = Position(x: 6.5, y: 3.2)
        let fix = try #require(RobustTrilateration(anchors: anchors).locate(FixtureFiles.readings(at: truth, anchors: anchors)))
        #expect(fix.position.distance(to: truth) < 0.05)
        #expect(fix.uncertainty > 0 && fix.uncertainty.isFinite)
        let centroid = try #require(WeightedCentroid(anchors: anchors).locate(FixtureFiles.readings(at: truth, anchors: anchors)))
        #expect(centroid.position.distance(to: truth) > fix.position.distance(to: truth))
    }

    @Test func oneShadowedBeaconDoesNotDragTheFix() throws {
        let truth = Position(x: 14, y: 6)
        // The beacon nearest the truth reads 15 dB low, as behind a body.
        let readings = FixtureFiles.readings(at: truth, anchors: anchors, offsets: [3: -15])
        let robust = try #require(RobustTrilateration(anchors: anchors).locate(readings))
        let plain = try #require(RobustTrilateration(anchors: anchors, lossScale: 1000).locate(readings))
        #expect(robust.position.distance(to: truth) < plain.position.distance(to: truth) / 2)
        #expect(robust.position.distance(to: truth) < 1)
    }

    @Test func fewerBeaconsMeanALargerUncertainty() throws {
        let truth = Position(x: 5, y: 5)
        let all = FixtureFiles.readings(at: truth, anchors: anchors)
        let many = try #require(RobustTrilateration(anchors: anchors).locate(all))
        let two = try #require(RobustTrilateration(anchors: anchors).locate(Array(all.prefix(2))))
        #expect(two.uncertainty > many.uncertainty)
    }

    @Test func fingerprintsReturnTheSurveyedSpot() throws {
        let spots = [Position(x: 2, y: 2), Position(x: 8, y: 8), Position(x: 15, y: 3)]
        let survey = spots.map { SurveyPoint(position: $0, readings: FixtureFiles.readings(at: $0, anchors: anchors)) }
        let index = FingerprintIndex(survey: survey, beaconCount: map.beacons.count, neighbours: 1)
        let fix = try #require(index.locate(FixtureFiles.readings(at: Position(x: 14.5, y: 3.5), anchors: anchors)))
        #expect(fix.position == spots[2])
    }

    @Test func particleFilterFollowsAWalkBetterThanSingleFixes() throws {
        var generator = SplitMix64(seed: 7)
        var filter = ParticleFilter(anchors: anchors, walls: map.walls)
        var filterErrors: [Double] = [], centroidErrors: [Double] = []
        for second in 0..<40 {
            let truth = Position(x: 2 + Double(second) * 0.2, y: 3)
            let noisy = FixtureFiles.readings(at: truth, anchors: anchors).map { reading in
                Reading(beacon: reading.beacon, rssi: reading.rssi + Double.random(in: -6...6, using: &generator))
            }
            let update = filter.update(noisy, at: Double(second))
            let fix = try #require(update)
            let single = try #require(WeightedCentroid(anchors: anchors).locate(noisy))
            if second >= 5 {
                filterErrors.append(fix.position.distance(to: truth))
                centroidErrors.append(single.position.distance(to: truth))
            }
        }
        let filterSummary = try #require(ErrorSummary(errors: filterErrors))
        let centroidSummary = try #require(ErrorSummary(errors: centroidErrors))
        #expect(filterSummary.median < centroidSummary.median)
    }

    @Test func particlesDoNotWalkThroughWalls() throws {
        // A receiver heard only by the west beacons stays west even after a long gap.
        var filter = ParticleFilter(anchors: anchors, walls: [MapWall(from: Position(x: 10, y: 0), to: Position(x: 10, y: 10))])
        let west = Position(x: 8, y: 5)
        for second in 0..<20 {
            let fix = filter.update(FixtureFiles.readings(at: west, anchors: anchors), at: Double(second))
            #expect(fix != nil && fix!.position.x < 10)
        }
    }

    @Test func errorSummaryLine() throws {
        let summary = try #require(ErrorSummary(errors: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))
        #expect(summary.line() == "error: median 5.50 m, p90 9.10 m, max 10.00 m (10 fixes)")
        #expect(ErrorSummary(errors: []) == nil)
    }
}
