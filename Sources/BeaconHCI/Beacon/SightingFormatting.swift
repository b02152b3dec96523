import BeaconKit
import Foundation

extension Sighting {
    /// One line for a live listing: time (`TimeDisplay`), address, format, identity, power,
    /// RSSI or "n/a".
    public var listingLine: String {
        let clock = TimeDisplay.string(time)
        let rssiText = rssi.map { "\($0) dBm" } ?? "n/a"
        let detail: String
        switch frame {
        case .iBeacon(let beacon):
            detail = "\(beacon.identity.uuid.uuidString) major \(beacon.identity.major) minor \(beacon.identity.minor) power \(beacon.measuredPower.dBm) dBm"
        case .altBeacon(let beacon):
            detail = "id \(Hex.string(beacon.beaconID)) reference \(beacon.referenceRSSI.dBm) dBm"
        case .eddystone(let eddystone):
            switch eddystone {
            case .uid(let namespace, let instance, let power):
                detail = "namespace \(Hex.string(namespace)) instance \(Hex.string(instance)) power \(power) dBm at 0 m"
            case .url(let power, let url):
                detail = "\(url) power \(power) dBm at 0 m"
            case .tlm(let telemetry):
                let temperature = telemetry.temperatureCelsius.map { String(format: "%.2f °C", $0) } ?? "n/a"
                detail = "battery \(telemetry.batteryMillivolts) mV temperature \(temperature) count \(telemetry.advertisingCount)"
            }
        }
        return "\(clock)  \(address)  \(frame.formatName)  \(detail)  rssi \(rssiText)"
    }
}
