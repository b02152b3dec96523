import BeaconKit
import BeaconSimulator
import Foundation
import Testing

/// Beacons switched off and on (docs/scenarios.md) and the switched-off benchmark by reception
/// rate (docs/evaluation.md).
@Suite struct SwitchedOffTests {
    /// Two fixed gateways, one near the beacon (about 10 packets/s) and one at the edge of range.
    private static func scenario(switching: String, duration: Double = 600) throws -> Scenario {
        let text = """
        {"name": "switch", "seed": 3, "duration": \(duration), "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
         "venue": {"width": 300, "height": 20},
         "channel": {"shadowing": {"sigma": 0}},
         "beacons": [{"major": 1, "minor": 1, "position": {"x": 1, "y": 10}, "switching": \(switching)}],
         "receivers": [{"name": "near", "position": {"x": 6, "y": 10}}, {"name": "edge", "position": {"x": 120, "y": 10}}]}
        """
        return try Scenario.decode(Data(text.utf8))
    }

    @Test func aSwitchedOffBeaconSendsNothingUntilItIsBackOn() throws {
        let scenario = try Self.scenario(switching: #"{"off": [{"from": 100, "to": 250}, {"from": 500}]}"#)
        var simulation = Simulation(scenario: scenario)
        let times = simulation.run().map(\.sighting.time)
        #expect(!times.isEmpty)
        #expect(!times.contains { ($0 >= 100 && $0 < 250) || $0 >= 500 })
        #expect(times.contains { $0 >= 250 && $0 < 251 }, "back on within one interval")
        #expect(scenario.switchSchedule() == [[100..<250, 500..<600]])
    }

    @Test func randomSwitchingIsRepeatableAndKeepsTheMinimumOffTime() throws {
        let scenario = try Self.scenario(switching: #"{"random": {"meanOn": 60, "meanOff": 10, "minOff": 30}}"#, duration: 3600)
        let schedule = scenario.switchSchedule()
        #expect(schedule == scenario.switchSchedule())
        let periods = try #require(schedule.first)
        #expect(periods.count > 10)
        #expect(periods.dropLast().allSatisfy { $0.upperBound - $0.lowerBound >= 30 })
    }

    @Test(arguments: [
        (#"{"off": [{"from": 10, "to": 5}]}"#, "beacons[0].switching.off[0].to"),
        (#"{"random": {"meanOn": 0.5, "meanOff": 10}}"#, "beacons[0].switching.random.meanOn"),
        (#"{"colour": 1}"#, "beacons[0].switching"),
    ])
    func badSwitchingIsRefusedWithItsPath(switching: String, path: String) {
        #expect { try Self.scenario(switching: switching) } throws: { error in
            (error as? ScenarioError)?.description.hasPrefix(path) == true
        }
    }

    /// A short run of the benchmark: every switch-off is answered, the near gateway's exits come
    /// within 1.2 × its bound, and the report carries the table in its text and JSON.
    @Test func benchmarkReportsExitLatencyByRate() throws {
        let scenario = try Self.scenario(switching: #"{"off": [{"from": 300, "to": 420}, {"from": 900, "to": 1020}]}"#, duration: 1200)
        let report = Evaluation(scenario: scenario, variants: Evaluation.monitoringVariants).run()
        let results = try #require(report.switchedOff)
        #expect(results.count == Evaluation.monitoringVariants.count)
        let evidence = try #require(results.first)
        let fast = try #require(evidence.bands.last { $0.pairs > 0 })
        #expect(fast.lower >= 4, "the near gateway hears most packets")
        #expect(fast.switchOffs == 2 && fast.missedSwitchOffs == 0)
        #expect(fast.latencyOverBound.max <= 1.2)
        let altBeacon = try #require(results.first { $0.configuration.contains("10 s") }?.bands.last { $0.pairs > 0 })
        #expect(altBeacon.exitLatency.p50 > fast.exitLatency.p50, "a fixed 10 s delay is slower for a fast beacon")
        #expect(report.text.contains("Switched off, fixed receivers by reception rate"))
        let json = try EvaluationReport.jsonDecoder().decode(EvaluationJSON.self, from: report.jsonData())
        // NaN (an empty band's median) is not equal to itself, so compare what is defined.
        #expect(json.switchedOff?.map(\.configuration) == results.map(\.configuration))
        #expect(json.switchedOff?.map { $0.bands.map(\.falseExits) } == results.map { $0.bands.map(\.falseExits) })
        #expect(json.switchedOff?.first?.bands.map(\.exitLatency.count) == evidence.bands.map(\.exitLatency.count))
        #expect(json.configurations.map(\.name) == report.variants.map(\.name))
    }

    @Test func jsonCarriesEveryConfiguration() throws {
        var scenario = try Scenario.decode(Data(minimalScenario.utf8))
        scenario.duration = 60
        let report = Evaluation(scenario: scenario).run()
        let object = try #require(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
        let configurations = try #require(object["configurations"] as? [[String: Any]])
        #expect(configurations.count == Evaluation.Variant.standard.count)
        #expect(object["switchedOff"] == nil)
        let decoded = try EvaluationReport.jsonDecoder().decode(EvaluationJSON.self, from: report.jsonData())
        #expect(decoded.configurations.compactMap(\.ranging).count == Evaluation.Variant.standard.filter(\.measuresRanging).count)
        #expect(decoded.configurations.compactMap(\.monitoring).count == Evaluation.Variant.standard.filter(\.measuresMonitoring).count)
    }
}
