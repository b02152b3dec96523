import Foundation
import Testing
@testable import BeaconKit

@Suite struct CalibrationTests {
    private func sightings(count: Int, every interval: Double, rssi: (Int) -> Int8) -> [Sighting] {
        (0..<count).map { Fixture.sighting(Fixture.identity(), time: Double($0) * interval, rssi: rssi($0)) }
    }

    @Test func reportsStatisticsAndTheMeasuredPowerToSet() throws {
        var collector = CalibrationCollector()
        // 40 samples over 11.7 s: 36 around -62, two reflections at -50, two shadowed at -80.
        let values: [Int8] = Array(repeating: [-61, -62, -63], count: 12).flatMap { $0 } + [-50, -50, -80, -80]
        for sighting in sightings(count: values.count, every: 0.3, rssi: { values[$0] }) { collector.add(sighting) }
        let report = try collector.report()
        #expect(report.sampleCount == 40)
        #expect(report.identity == Fixture.identity())
        #expect(abs(report.mean - (-62.3)) < 1e-9)
        #expect(report.trimmedMean == -62)   // 4 dropped at each end: both outliers pairs
        #expect(report.median == -62)
        #expect(report.standardDeviation > 4 && report.standardDeviation < 6)
        #expect(report.measuredPower == MeasuredPower(-62))
    }

    @Test func refusesFewerThanTwentySamples() {
        var collector = CalibrationCollector()
        for sighting in sightings(count: 19, every: 1, rssi: { _ in -60 }) { collector.add(sighting) }
        #expect(throws: CalibrationError.tooFewSamples(identity: Fixture.identity(), found: 19, required: 20)) {
            try collector.report()
        }
        #expect(CalibrationError.tooFewSamples(identity: Fixture.identity(), found: 19, required: 20).description.contains("at least 20"))
    }

    @Test func refusesLessThanTenSeconds() {
        var collector = CalibrationCollector()
        for sighting in sightings(count: 50, every: 0.1, rssi: { _ in -60 }) { collector.add(sighting) }
        #expect(throws: CalibrationError.self) { try collector.report() }
    }

    @Test func targetFiltersOtherBeaconsAndSamplesWithoutRSSIAreSkipped() throws {
        var collector = CalibrationCollector(target: Fixture.identity(2, 2))
        for index in 0..<30 {
            collector.add(Fixture.sighting(Fixture.identity(2, 2), time: Double(index) * 0.5, rssi: -70))
            collector.add(Fixture.sighting(Fixture.identity(3, 3), time: Double(index) * 0.5, rssi: -40))
            collector.add(Fixture.sighting(Fixture.identity(2, 2), time: Double(index) * 0.5, rssi: nil))
        }
        let report = try collector.report()
        #expect(report.sampleCount == 30 && report.measuredPower == MeasuredPower(-70))
        #expect(throws: CalibrationError.noBeacon(target: Fixture.identity(9, 9))) {
            try CalibrationCollector(target: Fixture.identity(9, 9)).report()
        }
    }
}

@Suite struct RegionStoreTests {
    private func temporaryStore() -> (RegionStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-regions-\(UUID().uuidString)")
        return (RegionStore(environment: ["PROXIMA_CONFIG_DIR": directory.path]), directory)
    }

    @Test func regionsSurviveARestart() throws {
        let (store, directory) = temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try store.load().isEmpty)
        try store.add(Fixture.region("lobby", major: 1))
        try store.add(Fixture.region("desk", major: 1, minor: 4))
        try store.add(Fixture.region("lobby", major: 2))
        let restarted = RegionStore(environment: store.environment)
        #expect(try restarted.load() == [Fixture.region("lobby", major: 2), Fixture.region("desk", major: 1, minor: 4)])
        #expect(try restarted.remove(identifier: "lobby"))
        #expect(try !restarted.remove(identifier: "lobby"))
        #expect(try store.load().map(\.identifier) == ["desk"])
    }

    @Test func corruptFileIsReportedWithItsPath() throws {
        let (store, directory) = temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        try ConfigurationDirectory.write(Data(#"{"version":1,"regions":[{"identifier":"x","uuid":"nope"}]}"#.utf8),
                                         to: RegionStore.fileName, environment: store.environment)
        do {
            _ = try store.load()
            Issue.record("a corrupt file must not load")
        } catch {
            #expect(error.description.contains(RegionStore.fileName))
            #expect(error.description.contains("nope"))
        }
    }
}
