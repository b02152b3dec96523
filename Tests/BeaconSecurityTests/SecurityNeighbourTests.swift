import BeaconKit
@testable import BeaconSecurity
import Foundation
import Testing

/// Two groups of fixed beacons 40 m apart (west: A, B, C; east: X, Y, Z), a gateway in each, and
/// phones that are not placed. A phone standing by A hears A, B and C.
enum TwoRooms {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static func beacon(_ minor: UInt16) -> BeaconIdentity { BeaconIdentity(uuid: uuid, major: 7, minor: minor) }
    static let a = beacon(1), b = beacon(2), c = beacon(3)
    static let x = beacon(4), y = beacon(5), z = beacon(6)
    static let lonely = beacon(7)

    static func site(_ configure: (inout SecuritySettings) -> Void = { _ in }) -> SecuritySite {
        var settings = SecuritySettings()
        configure(&settings)
        return SecuritySite(
            beacons: [
                a: .init(name: "A", position: Position3D(x: 0, y: 0)),
                b: .init(name: "B", position: Position3D(x: 6, y: 0)),
                c: .init(name: "C", position: Position3D(x: 0, y: 6)),
                x: .init(name: "X", position: Position3D(x: 40, y: 0)),
                y: .init(name: "Y", position: Position3D(x: 40, y: 6)),
                z: .init(name: "Z", position: Position3D(x: 46, y: 0)),
                lonely: .init(name: "lonely", position: Position3D(x: 100, y: 100)),
            ],
            receivers: ["west gateway": Position3D(x: 3, y: 3), "east gateway": Position3D(x: 43, y: 3)],
            settings: settings)
    }

    /// The site with the place check off, for the neighbour check's own tests: a phone by A
    /// hearing X loudly is also a place conflict (SecurityPlaceTests).
    static func neighbourCheckOnly() -> SecuritySite { site { $0.checksPlaces = false } }

    static func heard(_ identity: BeaconIdentity, by receiver: String, rssi: Int8, at time: Double) -> SecurityObservation {
        SecurityObservation(receiver: receiver, identity: identity, rssi: rssi, address: nil, receiverTime: time, serverTime: time + 0.3)
    }

    /// What a phone by A hears each second for `seconds`: A loud, B and C weaker; plus `extra`.
    static func phoneByA(_ detector: inout SecurityDetector, phone: String = "phone", from start: Double = 0, seconds: Int,
                         extra: (Double) -> [SecurityObservation] = { _ in [] }) -> [SecurityAlert] {
        var alerts: [SecurityAlert] = []
        for second in 0..<seconds {
            let time = start + Double(second)
            for observation in [heard(a, by: phone, rssi: -58, at: time), heard(b, by: phone, rssi: -78, at: time + 0.2),
                                heard(c, by: phone, rssi: -80, at: time + 0.4)] + extra(time) {
                detector.receive(observation, into: &alerts)
            }
        }
        return alerts
    }
}

@Suite struct SecurityNeighbourTests {
    @Test func neighboursAreTheFixedBeaconsAReceiverAtTheBeaconHearsNearestFirst() {
        let detector = SecurityDetector(site: TwoRooms.site())
        // Range at −90 dBm with exponent 3 for −59 dBm beacons: 10^(31/30) ≈ 10.8 m.
        #expect(detector.neighbourNames(of: TwoRooms.a) == ["B", "C"])
        #expect(detector.neighbourNames(of: TwoRooms.x) == ["Y", "Z"])
        #expect(detector.neighbourNames(of: TwoRooms.lonely).isEmpty)
        let narrow = SecurityDetector(site: TwoRooms.site { $0.neighbourHearingRSSI = -70 })
        #expect(narrow.neighbourNames(of: TwoRooms.a).isEmpty)
    }

    @Test func anHonestPhoneByItsBeaconsRaisesNothing() {
        var detector = SecurityDetector(site: TwoRooms.site())
        let alerts = TwoRooms.phoneByA(&detector, seconds: 600)
        #expect(alerts.isEmpty)
    }

    @Test func aPhoneHearingAFarBeaconLoudlyWithoutItsNeighboursRaisesAnAlertNamingBoth() throws {
        var detector = SecurityDetector(site: TwoRooms.neighbourCheckOnly())
        // The copy of X starts after the phone has listened for a minute.
        let alerts = TwoRooms.phoneByA(&detector, seconds: 180) { time in
            time >= 60 ? [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -60, at: time + 0.6)] : []
        }
        #expect(alerts.count == 1)
        let alert = try #require(alerts.first)
        #expect(alert.kind == .absentNeighbours)
        #expect(alert.identity == TwoRooms.x)
        #expect(alert.receivers == ["phone"])
        #expect(alert.reason.contains("phone hears fixed beacon X"))
        #expect(alert.reason.contains("none of the 2 beacons around it"))
        #expect(alert.reason.contains("Y (6 m), Z (6 m)"))
        // Five strikes a second apart: raised on the fifth copied sighting.
        #expect(alert.time >= 64 && alert.time < 65)
    }

    @Test func theCopyIsNotJudgedBeforeThePhoneListenedAFullWindow() {
        var detector = SecurityDetector(site: TwoRooms.neighbourCheckOnly())
        let alerts = TwoRooms.phoneByA(&detector, seconds: 25) { time in [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -60, at: time + 0.6)] }
        #expect(alerts.isEmpty)
        // After a silence longer than a third of the window the phone listens afresh.
        let later = TwoRooms.phoneByA(&detector, from: 1000, seconds: 25) { time in [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -60, at: time + 0.6)] }
        #expect(later.isEmpty)
    }

    @Test func aPhoneThatAlsoHearsTheNeighboursIsNotFlagged() {
        var detector = SecurityDetector(site: TwoRooms.neighbourCheckOnly())
        // Standing between the rooms' edges: X loud, and Y heard now and then (every 20 s).
        let alerts = TwoRooms.phoneByA(&detector, seconds: 300) { time in
            var extra = [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -60, at: time + 0.6)]
            if Int(time) % 20 == 0 { extra.append(TwoRooms.heard(TwoRooms.y, by: "phone", rssi: -92, at: time + 0.7)) }
            return extra
        }
        #expect(alerts.isEmpty)
    }

    @Test func aWeakSightingIsNoClaimAndALonelyBeaconIsNotChecked() {
        var detector = SecurityDetector(site: TwoRooms.neighbourCheckOnly())
        let alerts = TwoRooms.phoneByA(&detector, seconds: 300) { time in
            [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -75, at: time + 0.6),
             TwoRooms.heard(TwoRooms.lonely, by: "phone", rssi: -55, at: time + 0.8)]
        }
        #expect(alerts.isEmpty)
    }

    @Test func placedGatewaysAreLeftToTheCoverageCheck() {
        var detector = SecurityDetector(site: TwoRooms.site())
        var alerts: [SecurityAlert] = []
        for second in 0..<120 {
            detector.receive(TwoRooms.heard(TwoRooms.a, by: "west gateway", rssi: -62, at: Double(second)), into: &alerts)
        }
        #expect(alerts.isEmpty)
        #expect(detector.trackedCounts.phones == 0)
    }

    @Test func aContinuingCopyIsRaisedOncePerHoldoff() {
        var detector = SecurityDetector(site: TwoRooms.neighbourCheckOnly())
        let alerts = TwoRooms.phoneByA(&detector, seconds: 700) { time in
            time >= 60 ? [TwoRooms.heard(TwoRooms.x, by: "phone", rssi: -60, at: time + 0.6)] : []
        }
        // Raised at about 64 s, again after the 300 s holdoff, and again after another.
        #expect(alerts.count == 3)
        #expect(alerts.allSatisfy { $0.kind == .absentNeighbours })
    }

    @Test func manyPhonesKeepTheTableAtItsCap() {
        var detector = SecurityDetector(site: TwoRooms.site { $0.receiverCapacity = 50 })
        var alerts: [SecurityAlert] = []
        for index in 0..<5_000 {
            detector.receive(TwoRooms.heard(TwoRooms.a, by: "phone-\(index)", rssi: -60, at: Double(index) * 0.01), into: &alerts)
            #expect(detector.trackedCounts.phones <= 50)
        }
        #expect(detector.trackedCounts.phones >= 38)
        #expect(alerts.isEmpty)
    }

    @Test func aChangedRegistryKeepsWhatWasLearnt() {
        var detector = SecurityDetector(site: TwoRooms.site())
        _ = TwoRooms.phoneByA(&detector, seconds: 40)
        var moved = TwoRooms.site()
        moved.beacons[TwoRooms.c]?.position = Position3D(x: 0, y: 30)
        detector.update(site: moved)
        #expect(detector.neighbourNames(of: TwoRooms.a) == ["B"])
        #expect(detector.trackedCounts.phones == 1)
    }
}
