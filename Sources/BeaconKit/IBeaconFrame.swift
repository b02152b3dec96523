import Foundation

/// An iBeacon advertisement's payload: identity plus measured power.
///
/// On the air it is manufacturer-specific data under Apple's company id 0x004C:
/// `4C 00 02 15 <UUID 16> <major BE 2> <minor BE 2> <power int8>`.
public struct IBeaconFrame: Sendable, Hashable {
    public var identity: BeaconIdentity
    public var measuredPower: MeasuredPower

    public init(identity: BeaconIdentity, measuredPower: MeasuredPower = .appleDefault) {
        self.identity = identity
        self.measuredPower = measuredPower
    }

    /// Apple's company identifier, assigned by the Bluetooth SIG (Assigned Numbers, 0x004C).
    public static let appleCompanyID: UInt16 = 0x004C
    /// The iBeacon type byte inside Apple's manufacturer data.
    public static let typeByte: UInt8 = 0x02
    /// The number of bytes that follow the type and length bytes: UUID, major, minor, power.
    public static let payloadLength: UInt8 = 0x15
}

/// Any beacon frame that shares the advertising channels with iBeacon.
public enum BeaconFrame: Sendable, Hashable {
    case iBeacon(IBeaconFrame)
    case altBeacon(AltBeaconFrame)
    case eddystone(EddystoneFrame)

    public var iBeacon: IBeaconFrame? {
        if case .iBeacon(let frame) = self { return frame }
        return nil
    }

    /// A short name for listings: `iBeacon`, `AltBeacon`, `Eddystone-UID`, …
    public var formatName: String {
        switch self {
        case .iBeacon: "iBeacon"
        case .altBeacon: "AltBeacon"
        case .eddystone(let frame): frame.formatName
        }
    }
}
