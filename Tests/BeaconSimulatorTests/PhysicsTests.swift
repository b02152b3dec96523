import BeaconKit
import BeaconSimulator
import Foundation
import Testing

private let testUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

/// One beacon in the middle of an empty hall and fixed receivers at the given offsets from it.
private func hall(channel: ChannelModel, receivers offsets: [(dx: Double, dy: Double)], txPower: Double = 0,
                  duration: Double, seed: UInt64 = 11) -> Scenario {
    let centre = Position3D(x: 50, y: 50)
    let beacon = SimulatedBeacon(name: "b", identity: BeaconIdentity(uuid: testUUID, major: 1, minor: 1),
                                 address: BluetoothAddress(rawValue: 0xC0_00_00_00_00_01), position: centre, txPower: txPower)
    let receivers = offsets.enumerated().map { index, offset in
        SimulatedReceiver(name: "r\(index)", placement: .fixed(Position3D(x: centre.x + offset.dx, y: centre.y + offset.dy)))
    }
    return Scenario(name: "hall", seed: seed, duration: duration, venue: Venue(width: 100, height: 100),
                    channel: channel, beacons: [beacon], receivers: receivers)
}

private func ring(count: Int, radius: (Int) -> Double) -> [(dx: Double, dy: Double)] {
    (0..<count).map { index in
        let angle = Double(index) * 2.399963 // golden angle, so receivers spread around the beacon
        return (radius(index) * cos(angle), radius(index) * sin(angle))
    }
}

private func standardDeviation(_ values: [Double]) -> Double {
    let mean = values.reduce(0, +) / Double(values.count)
    return (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count - 1)).squareRoot()
}

@Suite struct PhysicsTests {
    /// Least squares of 10·log10(mean received power) on log10(distance) gives back the configured
    /// exponent and RSSI at 1 m, through shadowing, Rician/Rayleigh fading and per-channel offsets.
    @Test func leastSquaresRecoversExponentAndPowerAtOneMetre() {
        var channel = ChannelModel(pathLossExponent: 2.7, shadowingSigma: 4)
        channel.sensitivity = -110 // keep the fit free of truncation by the receiver's sensitivity
        let count = 240
        let offsets = ring(count: count) { pow(15, Double($0) / Double(count - 1)) } // 1 m … 15 m
        var simulation = Simulation(scenario: hall(channel: channel, receivers: offsets, txPower: -4, duration: 10))
        var powers: [String: (sum: Double, count: Int, distance: Double)] = [:]
        while let item = simulation.next() {
            guard let rssi = item.sighting.rssi, item.sighting.frame.iBeacon != nil else { continue }
            var entry = powers[item.sighting.receiver, default: (0, 0, item.truth.distance)]
            entry.sum += pow(10, Double(rssi) / 10)
            entry.count += 1
            powers[item.sighting.receiver] = entry
        }
        #expect(powers.count == count)
        let points = powers.values.map { (x: log10($0.distance), y: 10 * log10($0.sum / Double($0.count))) }
        let meanX = points.map(\.x).reduce(0, +) / Double(points.count)
        let meanY = points.map(\.y).reduce(0, +) / Double(points.count)
        let slope = points.map { ($0.x - meanX) * ($0.y - meanY) }.reduce(0, +) / points.map { ($0.x - meanX) * ($0.x - meanX) }.reduce(0, +)
        let intercept = meanY - slope * meanX
        let exponent = -slope / 10
        #expect(abs(exponent - 2.7) < 0.2, "fitted n = \(exponent)")
        #expect(abs(intercept - -63) < 1.5, "fitted P1m = \(intercept) dBm") // txPower −4 − referenceLoss 59
    }

    /// Gudmundson shadowing is an offset per place: a static receiver's long average keeps it, so
    /// receivers at the same distance disagree by about σ however long they listen, while each
    /// one's average is stable over time. Independent per-packet noise of the same σ averages away.
    @Test func staticShadowingDoesNotAverageAway() {
        let sigma = 6.0
        let offsets = ring(count: 60) { _ in 5 }
        func averages(_ channel: ChannelModel) -> [(first: Double, second: Double)] {
            var simulation = Simulation(scenario: hall(channel: channel, receivers: offsets, duration: 60))
            var halves: [String: (a: Double, na: Double, b: Double, nb: Double)] = [:]
            while let item = simulation.next() {
                guard let rssi = item.sighting.rssi else { continue }
                var entry = halves[item.sighting.receiver, default: (0, 0, 0, 0)]
                if item.sighting.time < 30 { entry.a += Double(rssi); entry.na += 1 } else { entry.b += Double(rssi); entry.nb += 1 }
                halves[item.sighting.receiver] = entry
            }
            return halves.values.map { ($0.a / $0.na, $0.b / $0.nb) }
        }
        let shadowed = averages(ChannelModel(shadowingSigma: sigma))
        let spread = standardDeviation(shadowed.map { ($0.first + $0.second) / 2 })
        #expect(spread > 0.7 * sigma && spread < 1.4 * sigma, "spread of long averages \(spread) dB")
        let drift = shadowed.map { abs($0.first - $0.second) }.max() ?? .infinity
        #expect(drift < 1.5, "largest change between the two halves \(drift) dB")

        let independent = averages(ChannelModel(shadowingSigma: 0, fading: .logNormal(sigma: sigma)))
        let averagedAway = standardDeviation(independent.map { ($0.first + $0.second) / 2 })
        #expect(averagedAway < 0.15 * sigma, "independent noise should average away, spread \(averagedAway) dB")
    }

    /// Packets overlap on the air more often when more beacons share it, and the capture ratio
    /// lets few of them survive.
    @Test func collisionsRiseWithTheNumberOfBeacons() {
        var rates: [Double] = []
        for count in [5, 40, 160] {
            let beacons = (0..<count).map { index in
                let angle = Double(index) * 2.399963, radius = 1 + 4 * Double(index % 7) / 6
                return SimulatedBeacon(name: "b\(index)", identity: BeaconIdentity(uuid: testUUID, major: 1, minor: UInt16(index)),
                                       address: BluetoothAddress(rawValue: 0xC0_00_00_00_10_00 + UInt64(index)),
                                       position: Position3D(x: 50 + radius * cos(angle), y: 50 + radius * sin(angle)))
            }
            let scenario = Scenario(name: "crowd", seed: 3, duration: 10, venue: Venue(width: 100, height: 100),
                                    beacons: beacons, receivers: [SimulatedReceiver(name: "gateway", placement: .fixed(Position3D(x: 50, y: 50)))])
            var simulation = Simulation(scenario: scenario)
            var heard = 0
            while simulation.next() != nil { heard += 1 }
            #expect(heard == simulation.statistics.received)
            rates.append(simulation.statistics.collisionRate)
        }
        #expect(rates[0] < rates[1] && rates[1] < rates[2], "collision rates \(rates)")
        // Pure ALOHA on one channel: a packet of 368 µs among N beacons at ~9.5 events/s is hit
        // with probability 1 − exp(−2·N·rate·T), 0.73 for 160 beacons if every interferer counts.
        #expect(rates[2] > 0.4 && rates[2] < 0.85, "160 beacons: \(rates[2])")
        #expect(rates[0] < 0.08, "5 beacons: \(rates[0])")
    }

    @Test func wallsOnTheLineOfSightAddTheirAttenuation() {
        let walls = [Wall(from: Position3D(x: 5, y: 0), to: Position3D(x: 5, y: 10), attenuation: 6),
                     Wall(from: Position3D(x: 8, y: 0), to: Position3D(x: 8, y: 4), attenuation: 10)]
        #expect(Propagation.wallLoss(from: Position3D(x: 1, y: 5), to: Position3D(x: 9, y: 5), walls: walls) == 6)
        #expect(Propagation.wallLoss(from: Position3D(x: 1, y: 2), to: Position3D(x: 9, y: 2), walls: walls) == 16)
        #expect(Propagation.wallLoss(from: Position3D(x: 1, y: 2), to: Position3D(x: 4, y: 8), walls: walls) == 0)
    }

    @Test func theBodyShadowsBeaconsBehindTheWalker() {
        let phone = Position3D(x: 10, y: 10)
        let facingEast = (x: 1.0, y: 0.0)
        #expect(Propagation.bodyBlocks(phone: phone, heading: facingEast, beacon: Position3D(x: 2, y: 10)))
        #expect(Propagation.bodyBlocks(phone: phone, heading: facingEast, beacon: Position3D(x: 4, y: 11)))
        #expect(!Propagation.bodyBlocks(phone: phone, heading: facingEast, beacon: Position3D(x: 18, y: 10)))
        #expect(!Propagation.bodyBlocks(phone: phone, heading: facingEast, beacon: Position3D(x: 10, y: 18)))
    }

    @Test func ricianFadingHasUnitMeanPowerAndRayleighFadesDeeper() {
        var random = SeededGenerator(seed: 5)
        func samples(_ k: Double) -> [Double] { (0..<20000).map { _ in Propagation.ricianFadingDecibels(kFactor: k, random: &random) } }
        let rayleigh = samples(0), rician = samples(10)
        let linearPowers: [Double] = rayleigh.map { pow(10, $0 / 10) }
        let linearMean: Double = linearPowers.reduce(0, +) / Double(rayleigh.count)
        #expect(abs(linearMean - 1) < 0.05)
        // Rayleigh fading's mean in dB is −2.5 dB (−10·γ/ln 10) and its deep fades are common.
        let decibelMean: Double = rayleigh.reduce(0, +) / Double(rayleigh.count)
        #expect(abs(decibelMean + 2.51) < 0.15)
        #expect(standardDeviation(rician) < standardDeviation(rayleigh) / 2)
    }

    @Test func walkersFollowTheirPathAndPause() {
        let path = WalkerPath(waypoints: [.init(Position3D(x: 0, y: 0), pause: 2), .init(Position3D(x: 10, y: 0))], speed: 2, loop: true)
        #expect(path.period == 2 + 5 + 5)
        #expect(path.state(at: 1).position == Position3D(x: 0, y: 0))
        #expect(path.state(at: 4.5).position == Position3D(x: 5, y: 0))
        #expect(path.state(at: 4.5).heading.x == 1)
        #expect(path.state(at: 9.5).position == Position3D(x: 5, y: 0))
        #expect(path.state(at: 9.5).heading.x == -1)
        #expect(path.state(at: 12 + 4.5).position == Position3D(x: 5, y: 0))
    }
}
