import BeaconKit
import Foundation

/// The log-distance model in the RSSI domain: a receiver with gain offset G hears a beacon of
/// power P (RSSI at 1 m) at distance d through walls of total loss L as
/// `P + G − 10·n·log10(d) − L` dBm. Calibration fits n, every P and every G.
public struct PathLossModel: Sendable, Hashable, Codable {
    /// n: 2 in free space, typically 1.6–3.5 indoors.
    public var exponent: Double
    /// RSSI at 1 m for beacons with neither a calibrated nor a configured power.
    public var defaultPower: Double
    /// Fitted powers by beacon id; they replace the configured ones.
    public var beaconPower: [String: Double]
    /// Fitted gain offsets by receiver name (0 for receivers not listed).
    public var receiverGain: [String: Double]
    /// Receivers are rarely at a beacon's height: distances never fall below this, which also
    /// keeps the logarithm finite under a beacon.
    public var heightOffset: Double

    public init(exponent: Double = 2, defaultPower: Double = -59, beaconPower: [String: Double] = [:],
                receiverGain: [String: Double] = [:], heightOffset: Double = 1) {
        self.exponent = exponent
        self.defaultPower = defaultPower
        self.beaconPower = beaconPower
        self.receiverGain = receiverGain
        self.heightOffset = heightOffset
    }

    public func power(of beacon: MappedBeacon) -> Double {
        beaconPower[beacon.id] ?? beacon.measuredPower ?? defaultPower
    }

    public func gain(of receiver: String) -> Double { receiverGain[receiver] ?? 0 }

    /// Expected RSSI at a squared horizontal distance (the height offset is added here).
    @inline(__always)
    public func expectedRSSI(power: Double, squaredDistance: Double) -> Double {
        power - 5 * exponent * log10(squaredDistance + heightOffset * heightOffset)
    }

    /// The horizontal distance at which a beacon of this power is heard at this RSSI.
    public func distance(rssi: Double, power: Double) -> Double {
        let slant = pow(10, (power - rssi) / (10 * exponent))
        return max(0, slant * slant - heightOffset * heightOffset).squareRoot()
    }
}

/// One beacon heard in one scan: the beacon's index in the map and its RSSI in dBm, already
/// corrected by the receiver's gain offset.
public struct Reading: Sendable, Hashable {
    public var beacon: Int
    public var rssi: Double

    public init(beacon: Int, rssi: Double) {
        self.beacon = beacon
        self.rssi = rssi
    }
}

public enum LocateMethod: String, Sendable, Hashable, Codable, CaseIterable {
    case centroid, trilateration, fingerprint, particle
}

/// An estimated position with the radius (metres, about one standard deviation) within which
/// the estimator believes the truth lies.
public struct Fix: Sendable, Hashable, Codable {
    public var position: Position
    public var uncertainty: Double
    public var method: LocateMethod

    public init(position: Position, uncertainty: Double, method: LocateMethod) {
        self.position = position
        self.uncertainty = uncertainty
        self.method = method
    }
}
