import BeaconKit
import BeaconLocate
import Foundation
import Testing

@Suite struct CalibrationTests {
    @Test func recoversExponentPowersAndGainsDespiteOutliers() throws {
        var generator = SplitMix64(seed: 3)
        let powers = ["a": -57.0, "b": -63.0, "c": -60.0]
        let gains = ["pi-1": 3.0, "pi-2": -3.0]
        var calibrator = SiteCalibrator()
        for (beacon, power) in powers {
            for (receiver, gain) in gains {
                for distance in stride(from: 1.0, through: 12, by: 1.0) {
                    for _ in 0..<10 {
                        let rssi = power + gain - 10 * 2.6 * log10(distance) + Double.random(in: -3...3, using: &generator)
                        calibrator.add(beacon: beacon, receiver: receiver, distance: distance, rssi: rssi)
                    }
                }
            }
        }
        // A shadowed link, 20 dB low at every reading.
        for _ in 0..<10 { calibrator.add(beacon: "a", receiver: "pi-1", distance: 2.5, rssi: -57 + 3 - 26 * log10(2.5) - 20) }
        let fit = try #require(calibrator.fit())
        #expect(abs(fit.exponent - 2.6) < 0.1)
        for (beacon, power) in powers { #expect(abs(fit.beaconPower[beacon]! - power) < 1) }
        for (receiver, gain) in gains { #expect(abs(fit.receiverGain[receiver]! - gain) < 1) }
    }

    /// A survey of two rooms split by a 10 dB wall, half its scans through the wall: the wall
    /// is taken off each reading before the fit, so the exponent is the radio's, not steeper.
    @Test func surveyScansThroughWallsFitTheRadiosExponent() throws {
        let map = SiteMap(width: 20, height: 10, walls: [MapWall(from: Position(x: 10, y: 0), to: Position(x: 10, y: 10), attenuation: 10)],
                          beacons: [MappedBeacon(id: "west", position: Position(x: 2, y: 5)), MappedBeacon(id: "east", position: Position(x: 18, y: 5))])
        var calibrator = SiteCalibrator()
        for x in stride(from: 1.0, to: 20, by: 2) {
            for y in stride(from: 1.0, to: 10, by: 2) {
                let spot = Position(x: x, y: y)
                let readings = map.beacons.indices.map { index in
                    let horizontal = spot.distance(to: map.beacons[index].position)
                    return Reading(beacon: index, rssi: -59 - 22 * log10((horizontal * horizontal + 1).squareRoot()) - map.wallLoss(from: map.beacons[index].position, to: spot))
                }
                calibrator.add(survey: SurveyPoint(position: spot, readings: readings), map: map, heightOffset: 1)
            }
        }
        let fit = try #require(calibrator.fit())
        #expect(abs(fit.exponent - 2.2) < 0.05, "\(fit)")
        for power in fit.beaconPower.values { #expect(abs(power + 59) < 0.5, "\(fit)") }
    }

    @Test func needsTwoDistancesAndKeepsMemoryBounded() {
        var calibrator = SiteCalibrator()
        for _ in 0..<1000 { calibrator.add(beacon: "a", receiver: "r", distance: 2, rssi: -70) }
        #expect(calibrator.fit() == nil)
        #expect(calibrator.linkCount == 1)
        calibrator.add(beacon: "a", receiver: "r", distance: .nan, rssi: -70)
        calibrator.add(beacon: "a", receiver: "r", distance: 3, rssi: .infinity)
        #expect(calibrator.linkCount == 1)
    }

    /// Kontakt sweeps (one phone, five beacons, 0.5–4 m and 5–0.5 m, taken at different
    /// times): each sweep counts as its own receiver, so the gain offset absorbs what changed
    /// between sessions. The fitted model explains the link medians better than the advertised
    /// −77 dBm with n = 2. It refits as readings arrive.
    @Test func kontaktSweepsCalibrate() throws {
        func rows(_ name: String) throws -> [(beacon: String, distance: Double, rssi: Double)] {
            let lines = try FixtureFiles.text("kontakt/\(name)").split(whereSeparator: \.isNewline).dropFirst()
            return lines.compactMap { line in
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                guard fields.count == 12, let rssi = Double(fields[3]), let distance = Double(fields[11]) else { return nil }
                return (String(fields[2]), distance, rssi)
            }
        }
        let sweeps = [("sweep-1", try rows("Range0.5to4mby0.5_labeled_DERIVED.csv")), ("sweep-2", try rows("Range5to.5mby.5_labeled_DERIVED.csv"))]
        #expect(sweeps[0].1.count == 358 && sweeps[1].1.count == 510)
        var calibrator = SiteCalibrator(defaultPower: -77)
        var fits: [SiteCalibration] = []
        for (receiver, readings) in sweeps {
            for (index, row) in readings.enumerated() {
                calibrator.add(beacon: row.beacon, receiver: receiver, distance: row.distance, rssi: row.rssi)
                if index % 100 == 99, let fit = calibrator.fit() { fits.append(fit) }
            }
        }
        let fit = try #require(calibrator.fit())
        #expect((1.4...4.5).contains(fit.exponent), "exponent \(fit.exponent)")
        #expect(fits.count >= 6)
        var groups: [String: [Double]] = [:]
        for (receiver, readings) in sweeps {
            for row in readings { groups["\(receiver)|\(row.beacon)|\(row.distance)", default: []].append(row.rssi) }
        }
        var fitted: [Double] = [], advertised: [Double] = []
        for (key, values) in groups {
            let parts = key.split(separator: "|").map(String.init)
            let median = values.sorted()[values.count / 2], distance = Double(parts[2])!
            let power = try #require(fit.beaconPower[parts[1]]), gain = try #require(fit.receiverGain[parts[0]])
            fitted.append(abs(median - (power + gain - 10 * fit.exponent * log10(distance))))
            advertised.append(abs(median - (-77 - 20 * log10(distance))))
        }
        let fittedSummary = try #require(ErrorSummary(errors: fitted))
        let advertisedSummary = try #require(ErrorSummary(errors: advertised))
        #expect(fittedSummary.median < advertisedSummary.median)
        print(String(format: "kontakt: exponent %.2f, gains %@, link median error %.1f dB fitted vs %.1f dB advertised (%d links)",
                     fit.exponent, fit.receiverGain.sorted { $0.key < $1.key }.map { String(format: "%@ %+.1f", $0.key, $0.value) }.joined(separator: ", "),
                     fittedSummary.median, advertisedSummary.median, fit.links))
    }
}
