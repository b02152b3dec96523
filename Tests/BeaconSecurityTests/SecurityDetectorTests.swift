import BeaconKit
import BeaconRotation
@testable import BeaconSecurity
import Foundation
import Testing

/// A 40 m hall: a door beacon by the west gateway, a shelf beacon by the east one, and a
/// carried tag. Times are on a simulated clock.
enum Hall {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let door = BeaconIdentity(uuid: uuid, major: 1, minor: 1)
    static let shelf = BeaconIdentity(uuid: uuid, major: 1, minor: 2)
    static let tag = BeaconIdentity(uuid: uuid, major: 2, minor: 1)
    static let doorAddress = BluetoothAddress(rawValue: 0xC0_00_00_00_00_01)

    static func site(_ configure: (inout SecuritySettings) -> Void = { _ in }) -> SecuritySite {
        var settings = SecuritySettings()
        configure(&settings)
        return SecuritySite(
            beacons: [
                door: .init(name: "door", position: Position3D(x: 1, y: 0), address: doorAddress),
                shelf: .init(name: "shelf", position: Position3D(x: 39, y: 0)),
                tag: .init(name: "tag", position: nil),
            ],
            receivers: ["west": Position3D(x: 0, y: 2), "east": Position3D(x: 40, y: 2)],
            settings: settings)
    }

    static func sighting(_ identity: BeaconIdentity, by receiver: String, rssi: Int8, at time: Double,
                         delay: Double = 0.5, address: BluetoothAddress? = nil) -> SecurityObservation {
        SecurityObservation(receiver: receiver, identity: identity, rssi: rssi, address: address ?? (identity == door ? doorAddress : nil),
                            receiverTime: time, serverTime: time + delay)
    }
}

/// Deterministic noise: a uniform integer in -spread...spread.
struct Noise {
    var generator = SplitMix64(seed: 42)
    mutating func next(_ spread: Int) -> Int { Int(generator.next() % UInt64(2 * spread + 1)) - spread }
}

@Suite struct SecurityClockTests {
    @Test func aClockAheadOfTheServerIsFlaggedOnceNamingTheReceiver() {
        var detector = SecurityDetector(site: Hall.site())
        var alerts: [SecurityAlert] = []
        for step in 0..<100 {
            let time = Double(step) * 0.5
            detector.receive(Hall.sighting(Hall.door, by: "west", rssi: -60, at: time, delay: -60), into: &alerts)
        }
        #expect(alerts.count == 1)
        #expect(alerts.first?.kind == .clockSkew)
        #expect(alerts.first?.receivers == ["west"])
        #expect(alerts.first?.identity == nil)
        #expect(alerts.first?.reason.contains("lead the server's clock by 60 s") == true)
    }

    @Test func oldTimestampsAreStaleSightings() {
        var detector = SecurityDetector(site: Hall.site())
        var alerts: [SecurityAlert] = []
        for step in 0..<20 { detector.receive(Hall.sighting(Hall.shelf, by: "east", rssi: -60, at: Double(step), delay: 45), into: &alerts) }
        #expect(alerts.map(\.kind) == [.staleSightings])
        #expect(alerts.first?.reason.contains("45 s before they arrived") == true)
    }

    @Test func aClockThatJumpsBackIsFlaggedAfterItsOffsetWasLearned() {
        var detector = SecurityDetector(site: Hall.site())
        var alerts: [SecurityAlert] = []
        for step in 0..<200 { detector.receive(Hall.sighting(Hall.door, by: "west", rssi: -60, at: Double(step) * 0.2, delay: 0.5), into: &alerts) }
        #expect(alerts.isEmpty)
        for step in 200..<260 { detector.receive(Hall.sighting(Hall.door, by: "west", rssi: -60, at: Double(step) * 0.2 - 8, delay: 8.5), into: &alerts) }
        #expect(alerts.map(\.kind) == [.clockSkew])
        #expect(alerts.first?.reason.contains("moved from 0.5 s to 8.5 s") == true)
    }

    @Test func honestUploadDelaysRaiseNothing() {
        var detector = SecurityDetector(site: Hall.site())
        var noise = Noise()
        var alerts: [SecurityAlert] = []
        for step in 0..<20_000 {
            let delay = 0.05 + Double(noise.next(50) + 50) / 100
            detector.receive(Hall.sighting(Hall.door, by: "west", rssi: Int8(-62 + noise.next(6)), at: Double(step) * 0.1, delay: delay), into: &alerts)
        }
        #expect(alerts.isEmpty)
    }

    @Test func aRepeatedAlertWaitsForTheHoldoff() {
        var detector = SecurityDetector(site: Hall.site())
        var alerts: [SecurityAlert] = []
        for step in 0..<1_000 { detector.receive(Hall.sighting(Hall.door, by: "west", rssi: -60, at: Double(step), delay: -10), into: &alerts) }
        // Server times run 10 s behind the receiver's: raised at the fifth strike (server time
        // -6), then every 300 s while it lasts.
        #expect(alerts.map(\.time) == [-6, 294, 594, 894])
    }
}

@Suite struct SecurityCrossReferenceTests {
    @Test func aFixedBeaconHeardStronglyFarFromItsPlaceIsOutOfCoverage() {
        var detector = SecurityDetector(site: Hall.site())
        var alerts: [SecurityAlert] = []
        for step in 0..<10 { detector.receive(Hall.sighting(Hall.door, by: "east", rssi: -55, at: Double(step) * 0.1), into: &alerts) }
        #expect(alerts.map(\.kind) == [.outOfCoverage])
        #expect(alerts.first?.identity == Hall.door)
        #expect(alerts.first?.receivers == ["east"])
        #expect(alerts.first?.reason.contains("east is 39.1 m away") == true)
    }

    @Test func honestLevelsNearAndFarRaiseNothing() {
        var detector = SecurityDetector(site: Hall.site())
        var noise = Noise()
        var alerts: [SecurityAlert] = []
        for step in 0..<10_000 {
            let time = Double(step) * 0.1
            // Log-distance at n = 2.5: about -61 dBm at 2.2 m, -99 dBm at 39 m, with ±6 dB of fading.
            detector.receive(Hall.sighting(Hall.door, by: "west", rssi: Int8(-61 + noise.next(6)), at: time), into: &alerts)
            detector.receive(Hall.sighting(Hall.door, by: "east", rssi: Int8(-97 + noise.next(6)), at: time), into: &alerts)
            detector.receive(Hall.sighting(Hall.shelf, by: "east", rssi: Int8(-61 + noise.next(6)), at: time), into: &alerts)
        }
        #expect(alerts.isEmpty)
    }

    @Test func aSecondAddressForARegisteredBeaconIsFlagged() {
        var detector = SecurityDetector(site: Hall.site())
        var alerts: [SecurityAlert] = []
        detector.receive(Hall.sighting(Hall.door, by: "west", rssi: -60, at: 0), into: &alerts)
        #expect(alerts.isEmpty)
        let other = BluetoothAddress(rawValue: 0xE0_00_00_00_00_07)
        detector.receive(Hall.sighting(Hall.door, by: "west", rssi: -60, at: 1, address: other), into: &alerts)
        #expect(alerts.map(\.kind) == [.secondAddress])
        #expect(alerts.first?.reason.contains("from address \(other), but it transmits from \(Hall.doorAddress)") == true)
        // Without a registered address, the first one heard is the beacon's.
        detector.receive(Hall.sighting(Hall.shelf, by: "east", rssi: -60, at: 2, address: other), into: &alerts)
        detector.receive(Hall.sighting(Hall.shelf, by: "east", rssi: -60, at: 3, address: other), into: &alerts)
        #expect(alerts.count == 1)
    }

    @Test func anAbruptRSSIChangeAtAGatewayIsFlaggedAndSteadyNoiseIsNot() {
        var detector = SecurityDetector(site: Hall.site())
        var noise = Noise()
        var alerts: [SecurityAlert] = []
        for step in 0..<5_000 {
            detector.receive(Hall.sighting(Hall.door, by: "west", rssi: Int8(-70 + noise.next(5)), at: Double(step) * 0.1), into: &alerts)
        }
        #expect(alerts.isEmpty)
        // A louder copy close to the gateway, every other packet.
        for step in 5_000..<5_100 {
            let rssi: Int8 = step % 2 == 0 ? -45 : Int8(-70 + noise.next(5))
            detector.receive(Hall.sighting(Hall.door, by: "west", rssi: rssi, at: Double(step) * 0.1), into: &alerts)
        }
        #expect(alerts.map(\.kind) == [.rssiShift])
        #expect(alerts.first?.reason.contains("fixed beacon door at west") == true)
    }
}

@Suite struct SecurityTraceTests {
    @Test func aCarriedIdentityAtBothEndsOfTheHallAtOnceIsAnImpossibleTrace() {
        var detector = SecurityDetector(site: Hall.site())
        var alerts: [SecurityAlert] = []
        for step in 0..<20 {
            let time = Double(step) * 0.1
            detector.receive(Hall.sighting(Hall.tag, by: step % 2 == 0 ? "west" : "east", rssi: -62, at: time), into: &alerts)
        }
        #expect(alerts.map(\.kind) == [.impossibleTrace])
        #expect(Set(alerts.first?.receivers ?? []) == ["west", "east"])
        #expect(alerts.first?.reason.contains("beacon tag") == true)
    }

    @Test func walkingFromOneEndToTheOtherIsPossible() {
        var detector = SecurityDetector(site: Hall.site())
        var noise = Noise()
        var alerts: [SecurityAlert] = []
        // 40 m at 1.6 m/s, heard by both gateways all the way with the level its distance gives.
        for step in 0..<250 {
            let time = Double(step) * 0.1
            let x = 1.6 * time
            for (receiver, gatewayX) in [("west", 0.0), ("east", 40.0)] {
                let distance = max(1, ((x - gatewayX) * (x - gatewayX) + 4).squareRoot())
                let rssi = -59 - 25 * log10(distance) + Double(noise.next(6))
                if rssi > -100 { detector.receive(Hall.sighting(Hall.tag, by: receiver, rssi: Int8(rssi.rounded()), at: time), into: &alerts) }
            }
        }
        #expect(alerts.isEmpty)
    }

    @Test func unknownReceiversAndRSSIlessSightingsAreNotPlaced() {
        var detector = SecurityDetector(site: Hall.site())
        var alerts: [SecurityAlert] = []
        for step in 0..<20 {
            let time = Double(step) * 0.1
            var sighting = Hall.sighting(Hall.tag, by: step % 2 == 0 ? "west" : "phone", rssi: -40, at: time)
            if step % 4 == 0 { sighting.rssi = nil }
            detector.receive(sighting, into: &alerts)
        }
        #expect(alerts.isEmpty)
    }
}

@Suite struct SecurityBoundedStateTests {
    @Test func aFloodOfMadeUpIdentitiesAndReceiversKeepsStateBounded() {
        var detector = SecurityDetector(site: Hall.site { settings in
            settings.identityCapacity = 1_000
            settings.receiverCapacity = 100
        })
        var alerts: [SecurityAlert] = []
        var random = SplitMix64(seed: 7)
        var largest = (identities: 0, receivers: 0, raised: 0)
        for step in 0..<60_000 {
            let identity = BeaconIdentity(uuid: Hall.uuid, major: UInt16(truncatingIfNeeded: random.next()), minor: UInt16(truncatingIfNeeded: random.next()))
            let receiver = step % 3 == 0 ? "made-up \(random.next() % 100_000)" : (step % 2 == 0 ? "west" : "east")
            // Every made-up receiver's clock also leads, so alerts are raised and remembered too.
            detector.receive(SecurityObservation(receiver: receiver, identity: identity, rssi: -40, address: nil,
                                                 receiverTime: Double(step) * 0.001 + 100, serverTime: Double(step) * 0.001), into: &alerts)
            let counts = detector.trackedCounts
            largest = (max(largest.identities, counts.identities), max(largest.receivers, counts.receivers), max(largest.raised, counts.raised))
        }
        #expect(largest.identities <= 1_000)
        #expect(largest.receivers <= 100)
        #expect(largest.raised <= 1_100)
        // The flood did fill the tables: the bound was reached, not just never approached.
        #expect(largest.identities == 1_000)
        #expect(largest.receivers == 100)
        // The real gateways are still judged: their leading clocks were flagged.
        #expect(alerts.contains { $0.receivers == ["west"] && $0.kind == .clockSkew })
    }
}

@Suite struct SecurityRotationTests {
    static let rotating = RotatingIdentity(uuid: Hall.uuid, key: try! RotationKey(parsing: "000102030405060708090a0b0c0d0e0f"),
                                           period: try! RotationPeriod(seconds: 300))

    static func detector() -> SecurityDetector {
        var site = Hall.site()
        site.rotations = [Hall.tag: rotating]
        return SecurityDetector(site: site)
    }

    @Test func thisPeriodsIdentityResolvesToTheRegisteredBeacon() {
        var detector = Self.detector()
        var alerts: [SecurityAlert] = []
        // Heard at both ends of the hall at once under this period's identity: the trace check
        // sees the registered tag, so it is an impossible trace of the tag.
        for step in 0..<20 {
            let time = 1_000 + Double(step) * 0.1
            let heard = Self.rotating.identity(at: time)
            detector.receive(Hall.sighting(heard, by: step % 2 == 0 ? "west" : "east", rssi: -62, at: time), into: &alerts)
        }
        #expect(alerts.map(\.kind) == [.impossibleTrace])
        #expect(alerts.first?.identity == Hall.tag)
    }

    @Test func anIdentityOfAPastPeriodIsAReplay() {
        var detector = Self.detector()
        var alerts: [SecurityAlert] = []
        let recorded = Self.rotating.identity(forPeriod: 1)
        // Period 1 is 300..<600; at 1,000 s (period 3) it is two periods old.
        detector.receive(Hall.sighting(recorded, by: "west", rssi: -62, at: 1_000), into: &alerts)
        #expect(alerts.map(\.kind) == [.replayedIdentity])
        #expect(alerts.first?.identity == Hall.tag)
        #expect(alerts.first?.reason.contains("of beacon tag heard by west is from period 1, 2 periods old") == true)
        // The previous period is still accepted just after the boundary (a clock running behind).
        alerts.removeAll()
        detector.receive(Hall.sighting(Self.rotating.identity(forPeriod: 3), by: "west", rssi: -62, at: 1_205), into: &alerts)
        #expect(alerts.isEmpty)
    }
}
