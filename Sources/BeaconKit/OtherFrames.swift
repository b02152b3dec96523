import Foundation

/// An AltBeacon advertisement (Radius Networks' open format): manufacturer data
/// `<company 2> BE AC <beacon id 20> <reference RSSI int8> <manufacturer reserved 1>`.
public struct AltBeaconFrame: Sendable, Hashable {
    public var companyID: UInt16
    /// 20 bytes; conventionally a 16-byte UUID, then 2-byte id2 and 2-byte id3.
    public var beaconID: [UInt8]
    public var referenceRSSI: MeasuredPower
    public var reserved: UInt8

    public init(companyID: UInt16, beaconID: [UInt8], referenceRSSI: MeasuredPower, reserved: UInt8) {
        self.companyID = companyID
        self.beaconID = beaconID
        self.referenceRSSI = referenceRSSI
        self.reserved = reserved
    }
}

/// Google's Eddystone frames, carried as service data under UUID 0xFEAA.
public enum EddystoneFrame: Sendable, Hashable {
    /// Frame type 0x00: 10-byte namespace, 6-byte instance, TX power at 0 m.
    case uid(namespace: [UInt8], instance: [UInt8], txPowerAt0m: Int8)
    /// Frame type 0x10: TX power at 0 m and the expanded URL.
    case url(txPowerAt0m: Int8, url: String)
    /// Frame type 0x20, unencrypted version 0: telemetry.
    case tlm(EddystoneTelemetry)

    public var formatName: String {
        switch self {
        case .uid: "Eddystone-UID"
        case .url: "Eddystone-URL"
        case .tlm: "Eddystone-TLM"
        }
    }
}

/// Eddystone-TLM version 0. Fleet health reads battery and temperature from it.
public struct EddystoneTelemetry: Sendable, Hashable {
    /// Battery voltage in mV; 0 means the beacon does not measure it.
    public var batteryMillivolts: UInt16
    /// Degrees Celsius from the 8.8 fixed-point field; nil for the "not supported" value 0x8000.
    public var temperatureCelsius: Double?
    public var advertisingCount: UInt32
    /// Time since power-on, in units of 0.1 s.
    public var uptimeDeciseconds: UInt32

    public init(batteryMillivolts: UInt16, temperatureCelsius: Double?, advertisingCount: UInt32, uptimeDeciseconds: UInt32) {
        self.batteryMillivolts = batteryMillivolts
        self.temperatureCelsius = temperatureCelsius
        self.advertisingCount = advertisingCount
        self.uptimeDeciseconds = uptimeDeciseconds
    }
}
