import Foundation
import Testing
@testable import BeaconKit

@Suite struct FilterAndDistanceTests {
    @Test func logDistanceFollowsThePathLossLaw() throws {
        let power = MeasuredPower(-59)
        #expect(try #require(DistanceModel.freeSpace.distance(rssi: -59, measuredPower: power)) == 1)
        #expect(abs(try #require(DistanceModel.freeSpace.distance(rssi: -79, measuredPower: power)) - 10) < 1e-9)
        let indoor = DistanceModel.logDistance(pathLossExponent: 4)
        #expect(abs(try #require(indoor.distance(rssi: -79, measuredPower: power)) - 10.0.squareRoot()) < 1e-9)
    }

    @Test func exponentOverridesApplyPerBeaconThenPerSite() throws {
        let beacon = Fixture.identity(5, 1), siteMate = Fixture.identity(5, 2), other = Fixture.identity(6, 1)
        let configuration = DistanceConfiguration(
            model: .freeSpace, beaconExponents: [beacon: 4],
            siteExponents: [.init(uuid: Fixture.uuid, major: 5): 3])
        #expect(configuration.pathLossExponent(for: beacon) == 4)
        #expect(configuration.pathLossExponent(for: siteMate) == 3)
        #expect(configuration.pathLossExponent(for: other) == 2)
        let distance = try #require(configuration.distance(rssi: -89, measuredPower: .appleDefault, identity: siteMate))
        #expect(abs(distance - 10) < 1e-9)
    }

    @Test func engineUsesTheOverriddenExponent() throws {
        let beacon = Fixture.identity()
        var engine = BeaconEngine(configuration: .init(filter: .none, distance: .init(model: .freeSpace, beaconExponents: [beacon: 3])))
        engine.startRanging(Fixture.region())
        var events: [BeaconEvent] = []
        engine.receive(Fixture.sighting(beacon, time: 0, rssi: -89), into: &events)
        engine.advance(to: 1, into: &events)
        let accuracy = try #require(events.last?.rangedBeacons?.first?.accuracy)
        #expect(abs(accuracy - 10) < 1e-6)
    }

    @Test func altBeaconCurvesMatchTheirPublishedFormula() throws {
        let power = MeasuredPower(-59)
        let ratio = -70.0 / -59.0
        let nexus5 = try #require(DistanceModel.altBeaconDefault.distance(rssi: -70, measuredPower: power))
        #expect(abs(nexus5 - (0.42093 * pow(ratio, 6.9476) + 0.54992)) < 1e-12)
        let nexus4 = try #require(DistanceModel.curveFit(.nexus4).distance(rssi: -70, measuredPower: power))
        #expect(abs(nexus4 - (0.89976 * pow(ratio, 7.7095) + 0.111)) < 1e-12)
        // Louder than the 1 m power: ratio^10.
        let close = try #require(DistanceModel.altBeaconDefault.distance(rssi: -50, measuredPower: power))
        #expect(abs(close - pow(50.0 / 59.0, 10)) < 1e-12)
    }

    @Test func bleaconFormulaIsOneMetreAtMeasuredPower() throws {
        #expect(try #require(DistanceModel.bleacon.distance(rssi: -59, measuredPower: .appleDefault)) == 1)
        let further = try #require(DistanceModel.bleacon.distance(rssi: -77, measuredPower: .appleDefault))
        #expect(abs(further - pow(12, 1.5 * (77.0 / 59.0 - 1))) < 1e-12)
    }

    @Test func kalmanConvergesAndSmooths() {
        var channel = RSSIFilterChannel(filter: .default)
        var random = EngineRandom(seed: 3)
        var outputs: [Double] = []
        for step in 0..<600 {
            outputs.append(channel.add(rssi: Int8(clamping: Int((-70 + random.gaussian(sigma: 4)).rounded())), time: Double(step) / 10))
        }
        let settled = outputs.suffix(300)
        let mean = settled.reduce(0, +) / Double(settled.count)
        let deviation = (settled.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(settled.count)).squareRoot()
        #expect(abs(mean + 70) < 1)
        #expect(deviation < 1.5, "filtered σ \(deviation) dB should be far below the 4 dB input")
    }

    @Test func kalmanFollowsAStepAfterSilence() {
        var channel = RSSIFilterChannel()
        for step in 0..<100 { channel.add(rssi: -80, time: Double(step) / 10) }
        // After 60 s of silence the variance has grown, so a new level is learnt quickly.
        let after = channel.add(rssi: -60, time: 70)
        #expect(after > -72)
    }

    @Test func armaStepIsTheAltBeaconRecurrence() {
        var channel = RSSIFilterChannel(filter: .altBeaconARMA)
        #expect(channel.add(rssi: -70, time: 0) == -70)
        #expect(abs(channel.add(rssi: -60, time: 1) - (-70 - 0.1 * (-70 + 60))) < 1e-5)
    }

    @Test func runningTrimmedMeanDropsTenPercentEachEndWithinTheWindow() throws {
        var window = RunningTrimmedMean()
        // 20 samples: -50 (outlier), 18 × -70, -90 (outlier); 10 % of 20 = 2 dropped each end.
        window.add(rssi: -50, time: 0)
        for step in 1...18 { window.add(rssi: -70, time: Double(step)) }
        window.add(rssi: -90, time: 19)
        #expect(try #require(window.estimate) == -70)
        // 21 s later, everything older than 20 s is gone.
        window.add(rssi: -40, time: 39)
        #expect(window.sampleCount == 2)
    }

    @Test func noneFilterReportsTheLatestSample() {
        var channel = RSSIFilterChannel(filter: .none)
        channel.add(rssi: -70, time: 0)
        #expect(channel.add(rssi: -61, time: 1) == -61)
    }

    @Test(arguments: [RSSIFilter.default, .altBeaconRunningAverage, .altBeaconARMA, .none])
    func everyFilterDrivesTheEngine(filter: RSSIFilter) throws {
        var engine = BeaconEngine(configuration: .init(filter: filter, distance: .init(model: .freeSpace)))
        engine.startRanging(Fixture.region())
        var events: [BeaconEvent] = []
        for step in 0..<50 { engine.receive(Fixture.sighting(Fixture.identity(), time: Double(step) / 10, rssi: -79), into: &events) }
        let last = try #require(events.compactMap(\.rangedBeacons).last?.first)
        #expect(abs(last.accuracy - 10) < 0.01)
        #expect(last.proximity == .far)
    }
}
