import BeaconKit
@testable import BeaconSecurity
import Foundation
import Testing

/// The place check: a phone hearing two fixed beacons, over a few seconds of its own clock,
/// louder than one place allows (the TwoRooms site: A, B, C in the west, X, Y, Z 40 m east).
@Suite struct SecurityPlaceTests {
    /// RSSI of a −59 dBm beacon at `distance` m with exponent 2, the checks' own model.
    static func level(at distance: Double) -> Int8 { Int8((-59 - 20 * log10(Swift.max(0.5, distance))).rounded()) }

    @Test func aPhoneByAHearingACopyOfXNamesX() throws {
        var detector = SecurityDetector(site: TwoRooms.site())
        let alerts = TwoRooms.phoneByA(&detector, seconds: 60) { time in
            time >= 20 ? [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -62, at: time + 0.6)] : []
        }
        let alert = try #require(alerts.first)
        #expect(alert.kind == .outOfCoverage)
        #expect(alert.identity == TwoRooms.x)
        #expect(alert.receivers == ["phone"])
        #expect(alert.reason.contains("fixed beacon X at a median -62 dBm"))
        // The widest miss is reported: X against A (40 m apart, A heard loudest).
        #expect(alert.reason.contains("and fixed beacon A at -58 dBm"))
        #expect(alert.reason.contains("40 m apart"))
        // Three readings of X for a median, then five strikes a second apart.
        #expect(alert.time > 22 && alert.time < 28)
        #expect(alerts.allSatisfy { $0.identity == TwoRooms.x })
    }

    @Test func anHonestPhoneWalkingFromWestToEastRaisesNothing() {
        var detector = SecurityDetector(site: TwoRooms.site())
        let places: [(BeaconIdentity, Position3D)] = [
            (TwoRooms.a, Position3D(x: 0, y: 0)), (TwoRooms.b, Position3D(x: 6, y: 0)), (TwoRooms.c, Position3D(x: 0, y: 6)),
            (TwoRooms.x, Position3D(x: 40, y: 0)), (TwoRooms.y, Position3D(x: 40, y: 6)), (TwoRooms.z, Position3D(x: 46, y: 0)),
        ]
        var alerts: [SecurityAlert] = []
        // There and back at 2 m/s (the fastest walk the checks allow), every beacon five times a
        // second, up to 6 dB above the model on each reading (fading peaks).
        var step = 0
        for tick in 0..<(2 * 240) {
            let time = Double(tick) * 0.2
            let along = 2 * (time.truncatingRemainder(dividingBy: 48) < 24 ? time.truncatingRemainder(dividingBy: 48) : 48 - time.truncatingRemainder(dividingBy: 48))
            let phone = Position3D(x: along, y: 3)
            for (identity, position) in places {
                step += 1
                let peak = Int8(step % 7)
                detector.receive(TwoRooms.heard(identity, by: "phone", rssi: Self.level(at: phone.distance(to: position)) + peak, at: time), into: &alerts)
            }
        }
        #expect(alerts.isEmpty)
    }

    /// A phone by X hears X, Y and Z faintly (so it hears X's neighbours), and copies of A and B
    /// loudly; B agrees with A's place and nothing heard tells for X's.
    static func phoneByXAmongCopies(_ detector: inout SecurityDetector, into alerts: inout [SecurityAlert]) {
        for second in 10..<120 {
            let time = Double(second)
            for observation in [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -60, at: time),
                                TwoRooms.heard(TwoRooms.y, by: "phone", rssi: -92, at: time + 0.1),
                                TwoRooms.heard(TwoRooms.z, by: "phone", rssi: -92, at: time + 0.2),
                                TwoRooms.heard(TwoRooms.a, by: "phone", rssi: -58, at: time + 0.3),
                                TwoRooms.heard(TwoRooms.b, by: "phone", rssi: -62, at: time + 0.6)] {
                detector.receive(observation, into: &alerts)
            }
        }
    }

    @Test func aBeaconAlreadyFoundCopiedIsBlamedNotTheRealOne() {
        // Without other evidence the phone's view is two places, and X is named.
        var unaware = SecurityDetector(site: TwoRooms.site())
        var alerts: [SecurityAlert] = []
        Self.phoneByXAmongCopies(&unaware, into: &alerts)
        #expect(alerts.contains { $0.kind == .outOfCoverage && $0.identity == TwoRooms.x })

        // A spoofer in the east sends A and B: the east gateway finds A out of its coverage.
        var detector = SecurityDetector(site: TwoRooms.site())
        alerts.removeAll()
        for second in 0..<10 {
            detector.receive(TwoRooms.heard(TwoRooms.a, by: "east gateway", rssi: -60, at: Double(second)), into: &alerts)
        }
        #expect(alerts.map(\.kind) == [.outOfCoverage])
        #expect(alerts.map(\.identity) == [TwoRooms.a])
        // Then A, a known copy, explains the conflict, and X is not named.
        alerts.removeAll()
        Self.phoneByXAmongCopies(&detector, into: &alerts)
        #expect(!alerts.contains { $0.identity == TwoRooms.x })
    }

    @Test func withTheCheckOffNothingIsRaised() {
        var detector = SecurityDetector(site: TwoRooms.neighbourCheckOnly())
        let alerts = TwoRooms.phoneByA(&detector, seconds: 25) { time in [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -60, at: time + 0.6)] }
        #expect(alerts.isEmpty)
    }

    @Test func theMedianTakesOnlyThePhonesReadingsInTheWindow() {
        var signal = RecentSignal()
        for (index, level) in [-90, -60, -61, -62, -59, -58, -57, -70, -66, -64].enumerated() {
            signal.add(rssi: Int8(level), at: 100, receiverTime: Double(index))
        }
        // Eight kept (the first two dropped); readings stamped 6...9: -57, -70, -66, -64.
        #expect(signal.median(since: 6, minimum: 3) == -65)
        #expect(signal.median(since: 8, minimum: 3) == nil)
        #expect(signal.median(since: 0, minimum: 3) == -61.5)
        #expect(signal.lastHeard == 100)
    }

    /// Found beside the csv fuzz finding (the same Int(_:) trap): a receiver stamping its
    /// sightings 1e300 s ahead is a clock alert whose reason states the figure, not a crash.
    @Test func anAbsurdTimestampIsAClockAlertNotATrap() throws {
        var detector = SecurityDetector(site: TwoRooms.site())
        var alerts: [SecurityAlert] = []
        for second in 0..<5 {
            detector.receive(SecurityObservation(receiver: "west gateway", identity: TwoRooms.a, rssi: -60, address: nil,
                                                 receiverTime: 1e300, serverTime: 10 + Double(second)), into: &alerts)
        }
        let alert = try #require(alerts.first)
        #expect(alert.kind == .clockSkew)
        #expect(alert.reason.contains("1e+300 s"))
    }
}
