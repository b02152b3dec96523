import BeaconKit
import BeaconSimulator
import Foundation
import Testing

/// The ranging claim of issue 5: a static receiver at 3 m, σ = 4 dB, n = 2, one second of
/// packets at 10 Hz. The engine's default filter with the model that is exact for this channel
/// (free-space log-distance, the default distance model before issue 11) must have a median
/// error at most 1.1 times that of the ideal estimator, which averages the independent dB
/// samples and inverts the model exactly (about 0.29 m).
///
/// Since issue 11 the default distance model is the robust one, which does not trust the
/// measured power completely and pulls estimates toward 2.25 m: on this channel, where the power
/// is exactly right, it pays for that robustness with a known bias, measured here too.
@Suite struct RangingClaimTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    struct Figures {
        var pipelineMedian: Double
        var idealMedian: Double
        var trials: Int
        /// The robust default's median estimate (m) for the beacon at 3 m.
        var robustMedianEstimate: Double
    }

    static func measure(trials: Int = 600, seed: UInt64 = 21) throws -> Figures {
        let channel = ChannelModel(pathLossExponent: 2, referenceLoss: 59, shadowingSigma: 0, fading: .logNormal(sigma: 4))
        let beacon = SimulatedBeacon(name: "b", identity: BeaconIdentity(uuid: uuid, major: 1, minor: 1),
                                     address: BluetoothAddress(rawValue: 0xC0_00_00_00_00_01), position: Position3D(x: 50, y: 50),
                                     measuredPower: MeasuredPower(-59), txPower: 0, interval: 0.1)
        let receivers = (0..<trials).map { index in
            let angle = 2 * Double.pi * Double(index) / Double(trials)
            return SimulatedReceiver(name: "r\(index)", placement: .fixed(Position3D(x: 50 + 3 * cos(angle), y: 50 + 3 * sin(angle))))
        }
        let scenario = Scenario(name: "claim", seed: seed, duration: 1.2, venue: Venue(width: 100, height: 100),
                                channel: channel, beacons: [beacon], receivers: receivers)
        var simulation = Simulation(scenario: scenario)
        var byReceiver: [String: [Sighting]] = [:]
        while let item = simulation.next() { byReceiver[item.sighting.receiver, default: []].append(item.sighting) }

        var pipelineErrors: [Double] = [], idealErrors: [Double] = [], robustEstimates: [Double] = []
        for sightings in byReceiver.values {
            // One second of packets: those within 1 s of the first.
            let second = sightings.filter { $0.time < sightings[0].time + 1 }
            let rssis = second.compactMap(\.rssi).map(Double.init)
            let mean = rssis.reduce(0, +) / Double(rssis.count)
            idealErrors.append(abs(pow(10, (-59 - mean) / 20) - 3))

            func accuracy(_ model: DistanceModel) throws -> Double {
                var engine = BeaconEngine(configuration: EngineConfiguration(distance: DistanceConfiguration(model: model)))
                engine.startRanging(try BeaconRegion(identifier: "claim", uuid: uuid))
                var events: [BeaconEvent] = []
                for sighting in second { engine.receive(sighting, into: &events) }
                engine.advance(to: second[0].time + 1, into: &events)
                let ranged = events.compactMap { event -> RangedBeacon? in
                    if case .didRange(let beacons, _, _) = event { return beacons.first }
                    return nil
                }.last
                #expect(ranged?.packetCount == second.count)
                return try #require(ranged?.accuracy)
            }
            pipelineErrors.append(abs(try accuracy(.freeSpace) - 3))
            robustEstimates.append(try accuracy(.default))
        }
        return Figures(pipelineMedian: Distribution.percentile(pipelineErrors.sorted(), 0.5),
                       idealMedian: Distribution.percentile(idealErrors.sorted(), 0.5), trials: byReceiver.count,
                       robustMedianEstimate: Distribution.percentile(robustEstimates.sorted(), 0.5))
    }

    @Test func defaultPipelineIsWithinTenPercentOfTheIdealEstimator() throws {
        let figures = try Self.measure()
        #expect(figures.trials == 600)
        print("ranging claim: Kalman + free-space log-distance median error \(figures.pipelineMedian) m, ideal estimator \(figures.idealMedian) m, ratio \(figures.pipelineMedian / figures.idealMedian)")
        // The ideal estimator's median error: σ/√10 ≈ 1.26 dB on the mean, ≈ 0.29 m at 3 m.
        #expect(figures.idealMedian > 0.22 && figures.idealMedian < 0.36)
        #expect(figures.pipelineMedian <= 1.1 * figures.idealMedian)
    }

    /// The robust default's answer here is its posterior median for the true loss at 3 m
    /// (9.54 dB at n = 2): the pull toward 2.25 m, not noise. A median estimate more than 5 % off
    /// that figure would mean the engine does not apply the model it documents.
    @Test func robustDefaultAnswersItsPosteriorMedian() throws {
        let figures = try Self.measure()
        let expected = try #require(RobustRangingParameters.default.distance(loss: 20 * log10(3)))
        print("ranging claim, robust default: median estimate \(figures.robustMedianEstimate) m for a beacon at 3 m (model: \(expected) m)")
        #expect(abs(figures.robustMedianEstimate - expected) < 0.05 * expected)
        #expect(expected < 3)
    }
}
