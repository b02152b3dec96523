import Foundation

extension BeaconFrame: CustomStringConvertible {
    /// One line in words, e.g.
    /// `iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major 0 minor 0 power -59 dBm`.
    public var description: String {
        switch self {
        case .iBeacon(let frame):
            return "iBeacon \(frame.identity.uuid.uuidString) major \(frame.identity.major) minor \(frame.identity.minor) "
                + "power \(frame.measuredPower.dBm) dBm"
                + (frame.measuredPower.isUsableForDistance ? "" : " (not usable for distance)")
        case .altBeacon(let frame):
            return "AltBeacon company \(hexWord(frame.companyID)) id \(Hex.string(frame.beaconID)) "
                + "reference RSSI \(frame.referenceRSSI.dBm) dBm"
        case .eddystone(.uid(let namespace, let instance, let txPower)):
            return "Eddystone-UID namespace \(Hex.string(namespace)) instance \(Hex.string(instance)) TX power \(txPower) dBm at 0 m"
        case .eddystone(.url(let txPower, let url)):
            return "Eddystone-URL \(url) TX power \(txPower) dBm at 0 m"
        case .eddystone(.tlm(let telemetry)):
            let battery = telemetry.batteryMillivolts == 0 ? "not measured" : "\(telemetry.batteryMillivolts) mV"
            let temperature = telemetry.temperatureCelsius.map { "\($0) °C" } ?? "not measured"
            return "Eddystone-TLM battery \(battery) temperature \(temperature) "
                + "advertisements \(telemetry.advertisingCount) uptime \(Double(telemetry.uptimeDeciseconds) / 10) s"
        }
    }
}

extension DecodedBeacon: CustomStringConvertible {
    /// The frame in words, then the RSSI and sender when the carrier gave them.
    public var description: String {
        var line = frame.description
        if let rssi { line += " rssi \(rssi) dBm" }
        if let address { line += " from \(address)" }
        return line
    }
}

/// `{"format", <frame fields>, "rssi" (null when unknown), "address" (null when unknown)}`; an
/// iBeacon's fields are Core Location's: uuid, major, minor, measuredPower, rssi.
extension DecodedBeacon: Codable {
    enum CodingKeys: String, CodingKey { case rssi, address }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(frame: try BeaconFrame(from: decoder),
                  rssi: try container.decodeIfPresent(Int8.self, forKey: .rssi),
                  address: try container.decodeIfPresent(BluetoothAddress.self, forKey: .address))
    }

    public func encode(to encoder: any Encoder) throws {
        try frame.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(address, forKey: .address)
    }
}

extension DecodedBeacon {
    /// One line of JSON with sorted keys, as `proxima decode --json` prints it.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
