import BeaconLocate
import Foundation
import Testing

/// The UCI BLE RSSI dataset (13 iBeacons in a library, cells), leave-one-day-out.
@Suite struct UCIDatasetTests {
    @Test func everyMethodAndTheBestBeatsTheCentroid() throws {
        let beacons = try BeaconTable.parse(try FixtureFiles.text("uci/beacons_DERIVED.csv"))
        let layout = ScanTableLayout(missing: -200, truthCell: "location", groupColumn: "date", timeColumn: "date")
        let scans = try layout.parse(try FixtureFiles.text("uci/iBeacon_RSSI_Labeled.csv"), beacons: beacons)
        #expect(scans.count == 1420)
        #expect(Set(scans.compactMap(\.group)).count == 11)
        let map = SiteMap(width: 30, height: 20, beacons: beacons)
        let errors = LeaveOneGroupOut(map: map, model: PathLossModel(), calibrate: true).errors(scans, methods: LocateMethod.allCases)
        var medians: [LocateMethod: Double] = [:]
        for method in LocateMethod.allCases {
            let summary = try #require(ErrorSummary(errors: errors[method] ?? []))
            #expect(summary.fixes == 1420)
            medians[method] = summary.median
            print("uci: \(method.rawValue) \(summary.line(unit: "cells"))")
        }
        let best = try #require(medians.values.min())
        #expect(best <= 0.75 * medians[.centroid]!)
    }
}
