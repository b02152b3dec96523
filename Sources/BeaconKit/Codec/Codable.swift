import Foundation

// JSON shapes: field names follow Core Location (uuid, major, minor, measuredPower, rssi);
// byte strings are lower-case hex; addresses are written `AA:BB:CC:DD:EE:FF`.

extension BeaconIdentity: Codable {
    enum CodingKeys: String, CodingKey { case uuid, major, minor }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .uuid)
        guard let uuid = UUID(uuidString: text) else {
            throw DecodingError.dataCorruptedError(forKey: .uuid, in: container,
                debugDescription: "expected a UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, found '\(text)'")
        }
        self.init(uuid: uuid, major: try container.decode(UInt16.self, forKey: .major),
                  minor: try container.decode(UInt16.self, forKey: .minor))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uuid.uuidString, forKey: .uuid)
        try container.encode(major, forKey: .major)
        try container.encode(minor, forKey: .minor)
    }
}

extension MeasuredPower: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Int8.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Int(dBm))
    }
}

extension BluetoothAddress: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = BluetoothAddress(text) else {
            throw DecodingError.dataCorruptedError(in: container,
                debugDescription: "expected a Bluetooth address like AA:BB:CC:DD:EE:FF, found '\(text)'")
        }
        self = address
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension IBeaconFrame: Codable {
    enum CodingKeys: String, CodingKey { case measuredPower }

    /// `{"uuid", "major", "minor", "measuredPower"}`, flat as in Core Location's CLBeacon.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(identity: try BeaconIdentity(from: decoder),
                  measuredPower: try container.decode(MeasuredPower.self, forKey: .measuredPower))
    }

    public func encode(to encoder: any Encoder) throws {
        try identity.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(measuredPower, forKey: .measuredPower)
    }
}

extension AltBeaconFrame: Codable {
    enum CodingKeys: String, CodingKey { case companyID, beaconID, referenceRSSI, reserved }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(companyID: try container.decode(UInt16.self, forKey: .companyID),
                  beaconID: try decodeHex(container, .beaconID),
                  referenceRSSI: try container.decode(MeasuredPower.self, forKey: .referenceRSSI),
                  reserved: try container.decode(UInt8.self, forKey: .reserved))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(companyID, forKey: .companyID)
        try container.encode(Hex.string(beaconID), forKey: .beaconID)
        try container.encode(referenceRSSI, forKey: .referenceRSSI)
        try container.encode(reserved, forKey: .reserved)
    }
}

extension EddystoneTelemetry: Codable {
    enum CodingKeys: String, CodingKey { case batteryMillivolts, temperatureCelsius, advertisingCount, uptimeDeciseconds }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(batteryMillivolts: try container.decode(UInt16.self, forKey: .batteryMillivolts),
                  temperatureCelsius: try container.decodeIfPresent(Double.self, forKey: .temperatureCelsius),
                  advertisingCount: try container.decode(UInt32.self, forKey: .advertisingCount),
                  uptimeDeciseconds: try container.decode(UInt32.self, forKey: .uptimeDeciseconds))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(batteryMillivolts, forKey: .batteryMillivolts)
        try container.encode(temperatureCelsius, forKey: .temperatureCelsius)
        try container.encode(advertisingCount, forKey: .advertisingCount)
        try container.encode(uptimeDeciseconds, forKey: .uptimeDeciseconds)
    }
}

/// `{"format": "iBeacon" | "AltBeacon" | "Eddystone-UID" | "Eddystone-URL" | "Eddystone-TLM", …}`
/// with the format's own fields beside it.
extension BeaconFrame: Codable {
    enum CodingKeys: String, CodingKey { case format, namespace, instance, txPowerAt0m, url }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let format = try container.decode(String.self, forKey: .format)
        switch format {
        case "iBeacon": self = .iBeacon(try IBeaconFrame(from: decoder))
        case "AltBeacon": self = .altBeacon(try AltBeaconFrame(from: decoder))
        case "Eddystone-UID":
            self = .eddystone(.uid(namespace: try decodeHex(container, .namespace),
                                   instance: try decodeHex(container, .instance),
                                   txPowerAt0m: try container.decode(Int8.self, forKey: .txPowerAt0m)))
        case "Eddystone-URL":
            self = .eddystone(.url(txPowerAt0m: try container.decode(Int8.self, forKey: .txPowerAt0m),
                                   url: try container.decode(String.self, forKey: .url)))
        case "Eddystone-TLM": self = .eddystone(.tlm(try EddystoneTelemetry(from: decoder)))
        default:
            throw DecodingError.dataCorruptedError(forKey: .format, in: container,
                debugDescription: "expected iBeacon, AltBeacon, Eddystone-UID, Eddystone-URL or Eddystone-TLM, found '\(format)'")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatName, forKey: .format)
        switch self {
        case .iBeacon(let frame): try frame.encode(to: encoder)
        case .altBeacon(let frame): try frame.encode(to: encoder)
        case .eddystone(.uid(let namespace, let instance, let txPower)):
            try container.encode(Hex.string(namespace), forKey: .namespace)
            try container.encode(Hex.string(instance), forKey: .instance)
            try container.encode(txPower, forKey: .txPowerAt0m)
        case .eddystone(.url(let txPower, let url)):
            try container.encode(txPower, forKey: .txPowerAt0m)
            try container.encode(url, forKey: .url)
        case .eddystone(.tlm(let telemetry)): try telemetry.encode(to: encoder)
        }
    }
}

/// `{"time", "receiver", "address", "rssi" (null when not available), "frame": {…}}`.
extension Sighting: Codable {
    enum CodingKeys: String, CodingKey { case time, receiver, address, rssi, frame }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(time: try container.decode(Double.self, forKey: .time),
                  receiver: try container.decode(String.self, forKey: .receiver),
                  address: try container.decode(BluetoothAddress.self, forKey: .address),
                  rssi: try container.decodeIfPresent(Int8.self, forKey: .rssi),
                  frame: try container.decode(BeaconFrame.self, forKey: .frame))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(time, forKey: .time)
        try container.encode(receiver, forKey: .receiver)
        try container.encode(address, forKey: .address)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(frame, forKey: .frame)
    }
}

/// `{"eventType" | "eventProperties", "addressType", "address", "rssi", "data": hex}`.
extension AdvertisingReport: Codable {
    enum CodingKeys: String, CodingKey { case eventType, eventProperties, addressType, address, rssi, data }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind: Kind
        if let properties = try container.decodeIfPresent(UInt16.self, forKey: .eventProperties) {
            kind = .extended(eventProperties: properties)
        } else {
            kind = .legacy(eventType: try container.decode(UInt8.self, forKey: .eventType))
        }
        self.init(kind: kind, addressType: try container.decode(UInt8.self, forKey: .addressType),
                  address: try container.decode(BluetoothAddress.self, forKey: .address),
                  rssi: try container.decodeIfPresent(Int8.self, forKey: .rssi),
                  data: try decodeHex(container, .data))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch kind {
        case .legacy(let eventType): try container.encode(eventType, forKey: .eventType)
        case .extended(let properties): try container.encode(properties, forKey: .eventProperties)
        }
        try container.encode(addressType, forKey: .addressType)
        try container.encode(address, forKey: .address)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(Hex.string(data), forKey: .data)
    }
}

private func decodeHex<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> [UInt8] {
    let text = try container.decode(String.self, forKey: key)
    do {
        return try Hex.bytes(text)
    } catch {
        throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: error.description)
    }
}
