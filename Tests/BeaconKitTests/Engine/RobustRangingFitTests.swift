import Foundation
import Testing
@testable import BeaconKit

/// Where the robust distance model's defaults come from: each is refitted here from the real
/// data it was taken from (provenance in Fixtures/README.md), so a changed default or fixture
/// shows up as a failing test rather than an undocumented number.
@Suite struct RobustRangingFitTests {
    struct Reading {
        var phone: String
        var metres: Double
        var rssi: Double
    }

    static func trainerTable() throws -> [Reading] {
        try DataFixtures.csv("rssi-distance-tables/altbeacon_pathloss_trainer_measurements.csv").map { row in
            Reading(phone: row["receiver_device"] ?? "", metres: try DataFixtures.field(row, "distance_m"),
                    rssi: try DataFixtures.field(row, "rssi_dbm"))
        }
    }

    /// Least squares of RSSI on −10·log10(d) with one intercept per group: the exponent n, and
    /// each group's 1 m level.
    static func pooledFit(_ readings: [Reading]) -> (exponent: Double, levels: [String: Double]) {
        let groups = Dictionary(grouping: readings, by: \.phone)
        var sxy = 0.0, sxx = 0.0
        for group in groups.values {
            let xs = group.map { 10 * log10($0.metres) }, ys = group.map(\.rssi)
            let mx = xs.reduce(0, +) / Double(xs.count), my = ys.reduce(0, +) / Double(ys.count)
            for (x, y) in zip(xs, ys) {
                sxy += (x - mx) * (y - my)
                sxx += (x - mx) * (x - mx)
            }
        }
        let exponent = -sxy / sxx
        let levels = groups.mapValues { group in
            group.map { $0.rssi + exponent * 10 * log10($0.metres) }.reduce(0, +) / Double(group.count)
        }
        return (exponent, levels)
    }

    static func standardDeviation(_ values: [Double], sample: Bool) -> Double {
        let mean = values.reduce(0, +) / Double(values.count)
        let squares = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +)
        return (squares / Double(values.count - (sample ? 1 : 0))).squareRoot()
    }

    @Test func defaultsAreTheTrainerTablesFits() throws {
        let table = try Self.trainerTable()
        #expect(table.count == 18)
        let fit = Self.pooledFit(table)
        let levels = Array(fit.levels.values)
        let meanLevel = levels.reduce(0, +) / Double(levels.count)
        let logDistances = table.map { log10($0.metres) }
        let meanLog = logDistances.reduce(0, +) / Double(logDistances.count)
        let defaults = RobustRangingParameters.default
        print("""
            trainer table: n = \(fit.exponent), 1 m levels \(fit.levels.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.1f", $0.value))" }), \
            spread \(Self.standardDeviation(levels, sample: true)) dB, mean \(meanLevel) dBm; \
            distances: geometric mean \(pow(10, meanLog)) m, spread \(Self.standardDeviation(logDistances, sample: false)) decades
            """)
        #expect(abs(fit.exponent - 1.97) < 0.005)
        #expect(abs(defaults.pathLossExponent - fit.exponent) < 0.05)
        #expect(abs(Self.standardDeviation(levels, sample: true) - defaults.powerSpread) < 0.05)
        #expect(abs(pow(10, meanLog) - defaults.typicalDistance) < 0.01)
        #expect(abs(Self.standardDeviation(logDistances, sample: false) - defaults.distanceSpread) < 0.001)
        // AltBeacon's reference is -59 dBm at 1 m; the phones read 1.9 dB less on average.
        let trainerShortfall = -59 - meanLevel
        #expect(abs(trainerShortfall - 1.9) < 0.05)
        // The Kontakt beacons advertise -77 dBm and read -81.5 dBm at 1 m (both sweeps' 1 m samples).
        let kontaktShortfall = try -77 - Self.kontaktOneMetreMean()
        #expect(abs(kontaktShortfall - 4.5) < 0.1)
        #expect(abs((trainerShortfall + kontaktShortfall) / 2 - defaults.shortfall) < 0.1)
    }

    static func kontaktOneMetreMean() throws -> Double {
        let samples = try KontaktRangeSweepTests.sweeps.flatMap(KontaktRangeSweepTests.load).filter { $0.distance == 1 }
        return samples.map { Double($0.rssi) }.reduce(0, +) / Double(samples.count)
    }

    @Test func robustModelIsLogDistanceWeightedTowardTheTypicalDistance() throws {
        let model = RobustRangingParameters.default
        let weight = model.measurementWeight(pathLossExponent: 2)
        #expect(weight > 0.45 && weight < 0.55)
        // At the loss the model expects at the typical distance, the answer is that distance.
        let typicalLoss = model.shortfall + 20 * log10(model.typicalDistance)
        #expect(abs(try #require(model.distance(loss: typicalLoss)) - model.typicalDistance) < 1e-9)
        // Elsewhere each dB moves the answer by `weight` of what plain log-distance would.
        let nearer = try #require(model.distance(loss: typicalLoss - 10))
        #expect(abs(log10(model.typicalDistance / nearer) - weight * 0.5) < 1e-9)
        // A measurement of no weight (no prior spread) answers the typical distance whatever is heard.
        let stubborn = RobustRangingParameters(distanceSpread: 0)
        #expect(stubborn.distance(loss: 40) == stubborn.typicalDistance)
        // Through the engine's model type, with a beacon's own exponent.
        let engineAnswer = try #require(DistanceModel.default.distance(rssi: -79, measuredPower: MeasuredPower(-59), pathLossExponent: 3))
        #expect(abs(engineAnswer - (try #require(model.distance(loss: 20, pathLossExponent: 3)))) < 1e-12)
        #expect(DistanceModel.default.distance(rssi: -60, measuredPower: MeasuredPower(0)) == nil)
    }

    /// The point of the model: a measured power wrong by 4.5 dB (the Kontakt beacons) moves the
    /// answer less than it moves plain log-distance's.
    @Test func aWrongMeasuredPowerMovesTheAnswerLessThanLogDistance() throws {
        for rssi in stride(from: -90.0, through: -60, by: 5) {
            let robustRight = try #require(DistanceModel.default.distance(rssi: rssi, measuredPower: MeasuredPower(-81)))
            let robustWrong = try #require(DistanceModel.default.distance(rssi: rssi, measuredPower: MeasuredPower(-77)))
            let plainRight = try #require(DistanceModel.freeSpace.distance(rssi: rssi, measuredPower: MeasuredPower(-81)))
            let plainWrong = try #require(DistanceModel.freeSpace.distance(rssi: rssi, measuredPower: MeasuredPower(-77)))
            // In log distance the robust answer moves by the measurement weight (about 0.5) of the error.
            #expect(log(robustWrong / robustRight) < 0.6 * log(plainWrong / plainRight))
            #expect(robustWrong > robustRight)
        }
    }
}
