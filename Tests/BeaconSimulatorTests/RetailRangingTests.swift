import BeaconKit
import BeaconSimulator
import Foundation
import Testing

/// Issue 11's ranging target in `proxima evaluate examples/retail.json`: the default pipeline's
/// median error in the 1–3 m band is at most 1.0 m (free-space log-distance, the default before,
/// erred 4.2 m). The scenario and the truth are the shipped ones, unchanged; docs/evaluation.md
/// explains what the band holds (43 % of it is a shopper with the beacon behind their body).
@Suite struct RetailRangingTests {
    @Test func defaultPipelineMeetsTheOneToThreeMetreTarget() throws {
        let scenario = try Scenario.load(contentsOf: examplesDirectory.appendingPathComponent("retail.json"))
        let base = EngineConfiguration()
        var freeSpace = base
        freeSpace.distance.model = .freeSpace
        let evaluation = Evaluation(scenario: scenario, variants: [
            .init(name: "default", configuration: base, measuresMonitoring: false, measuresRanging: true),
            .init(name: "free space", configuration: freeSpace, measuresMonitoring: false, measuresRanging: true),
        ])
        let report = evaluation.run()
        let robust = try #require(report.variants[0].ranging?.errorByBand[.oneToThree])
        let plain = try #require(report.variants[1].ranging?.errorByBand[.oneToThree])
        print("retail 1–3 m band: default median \(robust.p50) m (n = \(robust.count)), free-space log-distance \(plain.p50) m")
        #expect(robust.count == plain.count && robust.count > 5000)
        #expect(robust.p50 <= 1.0)
        #expect(robust.p50 < 0.5 * plain.p50)
    }
}
