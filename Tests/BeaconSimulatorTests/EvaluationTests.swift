import BeaconKit
import BeaconSimulator
import Foundation
import Testing

@Suite struct EvaluationTests {
    /// A walker who passes through the hall twice; the evaluation must see both visits, and the
    /// fixed exit delays must show as exit latencies in the right order.
    @Test func measuresLatencyAndComparesExitRules() throws {
        var scenario = try Scenario.decode(Data(minimalScenario.utf8))
        scenario.receivers = [SimulatedReceiver(name: "walker", placement: .walking(WalkerPath(
            waypoints: [.init(Position3D(x: 1, y: 5), pause: 60), .init(Position3D(x: 29, y: 5), pause: 120)], speed: 1.2, loop: true)))]
        scenario.venue.walls = [Wall(from: Position3D(x: 15, y: 0), to: Position3D(x: 15, y: 10), attenuation: 30)]
        scenario.duration = 900
        let report = Evaluation(scenario: scenario).run()
        #expect(report.truthEnters >= 4)
        #expect(report.truthExits >= 3)
        let byName = Dictionary(uniqueKeysWithValues: report.variants.map { ($0.name, $0) })
        let adaptive = try #require(byName["default: Kalman, robust log-distance, evidence exit"]?.monitoring)
        let altBeacon = try #require(byName["exit: fixed 10 s (AltBeacon)"]?.monitoring)
        let iOS = try #require(byName["exit: fixed 30 s (iOS-like)"]?.monitoring)
        #expect(adaptive.exitLatency.count > 0 && altBeacon.exitLatency.count > 0 && iOS.exitLatency.count > 0)
        // A fixed delay adds itself to the exit: 30 s later than the last packet, not 10 s.
        #expect(iOS.exitLatency.p50 > altBeacon.exitLatency.p50 + 10)
        #expect(adaptive.exitLatency.p50 < iOS.exitLatency.p50)
        // Ranging rows exist for every filter and model, and errors are finite.
        let ranging = report.variants.compactMap(\.ranging)
        #expect(ranging.count == 7)
        #expect(ranging.allSatisfy { $0.overall.count > 100 && $0.overall.p50.isFinite })
        #expect(report.trace.samples.count > 100)
        let text = report.text
        for variant in report.variants { #expect(text.contains(variant.name)) }
        let svg = report.svg
        #expect(svg.hasPrefix("<svg") && svg.contains("</svg>"))
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2 + ranging.count)
    }

    @Test func percentilesInterpolateBetweenRanks() {
        let distribution = Distribution([5, 1, 4, 2, 3])
        #expect(distribution.p50 == 3)
        #expect(abs(distribution.p90 - 4.6) < 1e-12)
        #expect(distribution.max == 5)
        #expect(Distribution([]).p50.isNaN)
    }
}

@Suite struct EvaluationRangingTests {
    /// With no shadowing and independent 4 dB noise, a receiver standing 3 m from a beacon is
    /// ranged to within a few tens of centimetres once the filter settles by the model that is
    /// exact for this channel (free-space log-distance with the right power), and it is never
    /// told it left: the evaluation's truth and matching add no error of their own.
    @Test func staticReceiverWithoutShadowingIsRangedCloselyAndNeverLeaves() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let beacon = SimulatedBeacon(name: "b", identity: BeaconIdentity(uuid: uuid, major: 1, minor: 1),
                                     address: BluetoothAddress(rawValue: 0xC0_00_00_00_00_01), position: Position3D(x: 10, y: 10))
        let scenario = Scenario(name: "static", seed: 4, duration: 600, venue: Venue(width: 20, height: 20),
                                channel: ChannelModel(pathLossExponent: 2, shadowingSigma: 0, fading: .logNormal(sigma: 4)),
                                beacons: [beacon], receivers: [SimulatedReceiver(name: "r", placement: .fixed(Position3D(x: 13, y: 10)))])
        let report = Evaluation(scenario: scenario).run()
        let freeSpace = try #require(report.variants.first { $0.name == "distance: log-distance n=2 (free space)" })
        let ranging = try #require(freeSpace.ranging)
        let band = try #require(ranging.errorByBand[.threeToFive])
        #expect(band.count > 500)
        #expect(band.p50 < 0.4, "median error \(band.p50) m")
        let monitoring = try #require(report.variants[0].monitoring)
        #expect(monitoring.falseExits == 0 && monitoring.falseEnters == 0)
        #expect(report.truthEnters == 1 && report.truthExits == 0)
        #expect(monitoring.enterLatency.count == 1 && monitoring.enterLatency.max < 0.2)
    }
}
