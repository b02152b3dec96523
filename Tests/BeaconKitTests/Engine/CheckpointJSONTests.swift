import Foundation
import Testing
@testable import BeaconKit

@Suite struct CheckpointJSONTests {
    /// Beacons of a real run, with every optional both present and absent among them.
    private func savedBeacons() -> [EngineCheckpoint.Beacon] {
        var engine = BeaconEngine()
        var random = EngineRandom(seed: 4)
        var discarded: [BeaconEvent] = []
        for step in 0..<2_000 {
            let minor = UInt16(step % 7)
            guard minor != 6 || step < 300 else { continue }
            let rssi = Int8(clamping: Int((-70 + random.gaussian(sigma: 6)).rounded()))
            engine.receive(Fixture.sighting(Fixture.identity(1, minor), time: Double(step) * 0.13, rssi: rssi), into: &discarded)
        }
        engine.advance(to: 400, into: &discarded)
        return engine.checkpoint.beacons
    }

    @Test func aBeaconWrittenDirectlyReadsBackAsTheSameRecord() throws {
        var beacons = savedBeacons()
        var bare = beacons[0]
        (bare.lastHeard, bare.exitDeadline, bare.meanGap, bare.recentDropout, bare.estimate) = (nil, nil, nil, nil, nil)
        (bare.evidenceGap, bare.evidencePeriod, bare.evidenceGapCount, bare.evidenceModel, bare.evidenceSinceRefresh) = (nil, nil, nil, nil, nil)
        (bare.variance, bare.gapDeviation, bare.measuredPower, bare.cycleRSSISum) = (1e-7, -0.0, -128, Int32.min)
        var adaptive = beacons[0]
        (adaptive.meanGap, adaptive.recentDropout, adaptive.lastHeard) = (0.1234567, 0.5, 1_733_244_000.123456)
        beacons += [bare, adaptive]
        #expect(beacons.contains { $0.evidenceGap != nil } && beacons.contains { $0.estimate != nil })
        for beacon in beacons {
            let text = try beacon.jsonText()
            let direct = try JSONDecoder().decode(EngineCheckpoint.Beacon.self, from: Data(text.utf8))
            let general = try JSONDecoder().decode(EngineCheckpoint.Beacon.self, from: JSONEncoder().encode(beacon))
            #expect(direct == beacon, "\(text)")
            #expect(direct == general)
            #expect(!text.contains("null"), "absent optionals are left out, as JSONEncoder does")
        }
    }

    @Test func aNonFiniteNumberIsRefusedByNameAsJSONEncoderRefusesIt() throws {
        var beacon = savedBeacons()[0]
        beacon.variance = .nan
        #expect(throws: EngineCheckpoint.Beacon.NonFiniteValue(field: "variance")) { try beacon.jsonText() }
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(beacon) }
        beacon.variance = 1
        beacon.evidenceMargin = .infinity
        #expect(throws: EngineCheckpoint.Beacon.NonFiniteValue(field: "evidenceMargin")) { try beacon.jsonText() }
    }
}
