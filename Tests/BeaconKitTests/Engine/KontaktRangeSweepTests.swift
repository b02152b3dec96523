import Foundation
import Testing
@testable import BeaconKit

/// Distance accuracy on dave31415's Kontakt range sweeps (five beacons moved together through
/// known distances). Each pipeline runs the whole engine: filter, distance model, 1 s ranging
/// cycles; a cycle's estimate for a beacon heard in it is compared with the distance label of
/// that beacon's latest sample.
@Suite struct KontaktRangeSweepTests {
    struct Sample {
        var time: Double
        var identity: BeaconIdentity
        var rssi: Int8
        var power: MeasuredPower
        var distance: Double
    }

    static let sweeps = ["kontakt-dave31415/Range0.5to4mby0.5_labeled_DERIVED.csv",
                         "kontakt-dave31415/Range5to.5mby.5_labeled_DERIVED.csv"]

    static func load(_ path: String) throws -> [Sample] {
        try DataFixtures.csv(path).map { row in
            let uuid = try BeaconIdentity.parseUUID(row["Proximity UUID"] ?? "")
            return Sample(time: try DataFixtures.field(row, "t_rel_s"),
                          identity: BeaconIdentity(uuid: uuid, major: try DataFixtures.field(row, "major"),
                                                   minor: try DataFixtures.field(row, "minor")),
                          rssi: try DataFixtures.field(row, "RSSI"),
                          power: MeasuredPower(try DataFixtures.field(row, "TxPower")),
                          distance: try DataFixtures.field(row, "distance_m_DERIVED"))
        }.sorted { $0.time < $1.time }
    }

    /// Per-cycle absolute errors of one pipeline; `power` replaces the advertised measured power
    /// (as if the beacons had been reconfigured with a calibrated value).
    static func errors(_ samples: [Sample], configuration: EngineConfiguration, power: MeasuredPower? = nil) throws -> [Double] {
        var engine = BeaconEngine(configuration: configuration)
        engine.startRanging(try BeaconRegion(identifier: "kontakt", uuid: samples[0].identity.uuid))
        var truth: [BeaconIdentity: Double] = [:]
        var errors: [Double] = []
        var events: [BeaconEvent] = []
        func collect() {
            for event in events {
                for beacon in event.rangedBeacons ?? [] where beacon.packetCount > 0 && beacon.accuracy >= 0 {
                    if let distance = truth[beacon.identity] { errors.append(abs(beacon.accuracy - distance)) }
                }
            }
            events.removeAll()
        }
        for sample in samples {
            let frame = IBeaconFrame(identity: sample.identity, measuredPower: power ?? sample.power)
            engine.receive(Sighting(time: sample.time, receiver: "phone", address: BluetoothAddress(rawValue: 1),
                                    rssi: sample.rssi, frame: .iBeacon(frame)), into: &events)
            collect()
            truth[sample.identity] = sample.distance
        }
        engine.advance(to: samples.last!.time + 1, into: &events)
        collect()
        return errors
    }

    /// Apple's procedure on one sweep's samples labelled 1 m (the five beacons are one model with
    /// one setting, so their samples are pooled).
    static func calibratedPower(_ samples: [Sample]) throws -> CalibrationReport {
        let atOneMetre = samples.filter { $0.distance == 1.0 }
        return try Calibration.report(identity: atOneMetre[0].identity, samples: atOneMetre.map { ($0.time, $0.rssi) })
    }

    static let defaultPipeline = EngineConfiguration()
    static let altBeaconPipeline = EngineConfiguration(filter: .altBeaconRunningAverage, distance: .init(model: .altBeaconDefault))

    @Test func defaultPipelineBeatsAltBeaconsCurveOnceMeasuredPowerIsCalibrated() throws {
        let sweeps = try Self.sweeps.map(Self.load)
        #expect(sweeps.map(\.count) == [358, 510])

        // As advertised (-77 dBm).
        let advertisedDefault = try sweeps.flatMap { try Self.errors($0, configuration: Self.defaultPipeline) }
        let advertisedAltBeacon = try sweeps.flatMap { try Self.errors($0, configuration: Self.altBeaconPipeline) }

        // Calibrated per Apple's procedure on the *other* sweep's 1 m samples, so no sweep is
        // scored with a power measured on itself.
        let reports = try sweeps.map(Self.calibratedPower)
        var calibratedDefault: [Double] = [], calibratedAltBeacon: [Double] = []
        for (index, sweep) in sweeps.enumerated() {
            let power = reports[1 - index].measuredPower
            calibratedDefault += try Self.errors(sweep, configuration: Self.defaultPipeline, power: power)
            calibratedAltBeacon += try Self.errors(sweep, configuration: Self.altBeaconPipeline, power: power)
        }
        print("""
            Kontakt range sweeps, median |error| per ranging cycle (\(advertisedDefault.count) cycles):
              advertised power -77 dBm:  default (Kalman + log-distance n=2) \(String(format: "%.3f", median(advertisedDefault))) m, \
            AltBeacon (running average + Nexus 5 curve) \(String(format: "%.3f", median(advertisedAltBeacon))) m
              calibrated power (\(reports.map { "\($0.measuredPower.dBm) dBm from \($0.sampleCount) samples" }.joined(separator: ", "))): \
            default \(String(format: "%.3f", median(calibratedDefault))) m, AltBeacon \(String(format: "%.3f", median(calibratedAltBeacon))) m
            """)
        #expect(advertisedDefault.count == advertisedAltBeacon.count)
        #expect(calibratedDefault.count > 500)
        #expect(median(calibratedDefault) < median(calibratedAltBeacon))
    }
}
