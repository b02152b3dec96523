import Foundation
@testable import BeaconKit

/// SplitMix64: a small deterministic generator, so every simulated run is repeatable.
typealias EngineRandom = SplitMix64

extension SplitMix64 {
    mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }
    /// Box–Muller.
    mutating func gaussian(sigma: Double) -> Double {
        let u1 = max(uniform(), .leastNormalMagnitude), u2 = uniform()
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// The test's clock: time moves only when the test says so.
struct MockClock {
    private(set) var now: Double
    init(start: Double = 1_000) { now = start }
    mutating func advance(by seconds: Double) -> Double {
        now += seconds
        return now
    }
}

enum Fixture {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let otherUUID = UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!

    static func identity(_ major: UInt16 = 1, _ minor: UInt16 = 1, uuid: UUID = uuid) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    static func sighting(_ identity: BeaconIdentity, time: Double, rssi: Int8? = -65,
                         power: MeasuredPower = .appleDefault) -> Sighting {
        Sighting(time: time, receiver: "test", address: BluetoothAddress(rawValue: 0xA1B2C3D4E5F6),
                 rssi: rssi, frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: power)))
    }

    static func region(_ identifier: String = "site", major: UInt16? = nil, minor: UInt16? = nil,
                       uuid: UUID = uuid) -> BeaconRegion {
        try! BeaconRegion(identifier: identifier, uuid: uuid, major: major, minor: minor)
    }

    /// RSSI that the log-distance model (n = 2) maps to `metres` for the given power.
    static func rssi(atMetres metres: Double, power: MeasuredPower = .appleDefault) -> Double {
        Double(power.dBm) - 20 * log10(metres)
    }
}

extension BeaconEvent {
    var isEnter: Bool { if case .didEnter = self { true } else { false } }
    var isExit: Bool { if case .didExit = self { true } else { false } }
    var rangedBeacons: [RangedBeacon]? { if case .didRange(let beacons, _, _) = self { beacons } else { nil } }
}
