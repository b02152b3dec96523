/// The calibrated RSSI at one metre that a beacon advertises, as the signed byte on the air.
///
/// Zero and positive values do occur on real devices (an Estimote frame carries +116, Home
/// Assistant captures carry 0). They are carried faithfully but cannot anchor a distance estimate.
public struct MeasuredPower: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var dBm: Int8

    public init(_ dBm: Int8) { self.dBm = dBm }

    /// Apple's default for a transmitter with no calibration (C5 on the air).
    public static let appleDefault = MeasuredPower(-59)

    /// Only a negative RSSI at 1 m is physically meaningful for a BLE receiver.
    public var isUsableForDistance: Bool { dBm < 0 }

    public var byte: UInt8 { UInt8(bitPattern: dBm) }

    public var description: String { "\(dBm) dBm" }

    public static func < (lhs: MeasuredPower, rhs: MeasuredPower) -> Bool { lhs.dBm < rhs.dBm }
}
