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
    static let freeSpacePipeline = EngineConfiguration(distance: .init(model: .freeSpace))
    static let altBeaconPipeline = EngineConfiguration(filter: .altBeaconRunningAverage, distance: .init(model: .altBeaconDefault))

    /// Issue 11: the default pipeline (Kalman + robust log-distance) must not need the advertised
    /// power to be right. With the power as advertised (4.5 dB too high) its median error is at
    /// most 0.8 × AltBeacon's (20 s running average + Nexus 5 curve); with the power calibrated
    /// by Apple's procedure on the other sweep, at most 0.7 × AltBeacon's. None of the robust
    /// model's parameters was fitted on these sweeps (see RobustRangingFitTests).
    @Test func defaultPipelineBeatsAltBeaconsCurveWithAdvertisedAndCalibratedPower() throws {
        let sweeps = try Self.sweeps.map(Self.load)
        #expect(sweeps.map(\.count) == [358, 510])

        func advertised(_ configuration: EngineConfiguration) throws -> [Double] {
            try sweeps.flatMap { try Self.errors($0, configuration: configuration) }
        }
        // Calibrated per Apple's procedure on the *other* sweep's 1 m samples, so no sweep is
        // scored with a power measured on itself.
        let reports = try sweeps.map(Self.calibratedPower)
        func calibrated(_ configuration: EngineConfiguration) throws -> [Double] {
            try sweeps.indices.flatMap { try Self.errors(sweeps[$0], configuration: configuration, power: reports[1 - $0].measuredPower) }
        }
        let pipelines = [("default (Kalman + robust log-distance)", Self.defaultPipeline),
                         ("free space (Kalman + log-distance n=2)", Self.freeSpacePipeline),
                         ("AltBeacon (running average + Nexus 5 curve)", Self.altBeaconPipeline)]
        var medians: [[Double]] = []
        var lines: [String] = []
        for (name, configuration) in pipelines {
            let errors = [try advertised(configuration), try calibrated(configuration)]
            #expect(errors[0].count == 867 && errors[1].count == 867)
            medians.append(errors.map(median))
            lines.append("  \(name): advertised \(String(format: "%.3f", medians.last![0])) m, calibrated \(String(format: "%.3f", medians.last![1])) m")
        }
        print("""
            Kontakt range sweeps, median |error| per ranging cycle (867 cycles; calibrated power \
            \(reports.map { "\($0.measuredPower.dBm) dBm from \($0.sampleCount) samples" }.joined(separator: ", "))):
            \(lines.joined(separator: "\n"))
              default / AltBeacon: advertised \(String(format: "%.3f", medians[0][0] / medians[2][0])), \
            calibrated \(String(format: "%.3f", medians[0][1] / medians[2][1]))
            """)
        #expect(medians[0][0] <= 0.8 * medians[2][0])
        #expect(medians[0][1] <= 0.7 * medians[2][1])
        // And it is what makes the difference: plain log-distance fails the first bound.
        #expect(medians[1][0] > 0.8 * medians[2][0])
    }
}
