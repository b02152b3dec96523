extension IBeaconFrame {
    /// The 25 bytes of manufacturer data: `4C 00 02 15 <UUID> <major BE> <minor BE> <power>`.
    public var manufacturerData: [UInt8] {
        var bytes: [UInt8] = [0x4C, 0x00, Self.typeByte, Self.payloadLength]
        bytes.reserveCapacity(25)
        bytes += identity.uuid.bytes
        bytes += [UInt8(identity.major >> 8), UInt8(identity.major & 0xFF),
                  UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF), measuredPower.byte]
        return bytes
    }

    /// The 30 bytes of advertising data as the iBeacon book gives them:
    /// `02 01 <flags> 1A FF 4C 00 02 15 <UUID> <major> <minor> <power>`.
    /// Flags are 0x1A by default (AirLocate); 0x06 is the common alternative.
    public func advertisingData(flags: UInt8 = AdvertisingFlags.airLocate) -> [UInt8] {
        var writer = ADWriter()
        writer.appendFlags(flags)
        writer.append(.manufacturerSpecificData, manufacturerData)
        return writer.bytes
    }

    /// Decodes manufacturer data that starts with the company id. Nil when it is not an
    /// iBeacon (another company, another Apple type); throws when it claims to be one but is
    /// malformed. Offsets in errors count from the company id.
    public init?(manufacturerData: some Collection<UInt8>) throws(DecodeError) {
        let bytes = Array(manufacturerData)
        let frame = try bytes.withDecodingBuffer { (buffer) throws(DecodeError) -> IBeaconFrame? in
            guard buffer.count >= 2 else {
                throw DecodeError(field: "manufacturer data company id", offset: 0, expected: "2 bytes",
                                  found: "\(buffer.count) byte\(buffer.count == 1 ? "" : "s")")
            }
            guard buffer.getUInt16LittleEndian(at: 0) == Self.appleCompanyID else { return nil }
            return try FrameScanner.locateIBeacon(inAppleData: buffer, from: 2, to: buffer.count)?.iBeacon(in: buffer)
        }
        guard let frame else { return nil }
        self = frame
    }

    /// The first iBeacon in advertising data, nil when there is none.
    public init?(advertisingData: [UInt8]) throws(DecodeError) {
        guard let frame = try BeaconFrame.decodeAll(advertisingData: advertisingData).lazy.compactMap(\.iBeacon).first
        else { return nil }
        self = frame
    }
}

extension AltBeaconFrame {
    /// Manufacturer data length of an AltBeacon: company 2, code 2, id 20, RSSI 1, reserved 1.
    public static let manufacturerDataLength = 26

    /// Decodes manufacturer data starting with the company id; nil when it is not an AltBeacon.
    public init?(manufacturerData: some Collection<UInt8>) {
        let bytes = Array(manufacturerData)
        guard bytes.count == Self.manufacturerDataLength, bytes[2] == 0xBE, bytes[3] == 0xAC,
              case .altBeacon(let frame) = bytes.withUnsafeBytes({ LocatedFrame(format: .altBeacon, range: 0..<$0.count).frame(in: $0) })
        else { return nil }
        self = frame
    }

    /// `<company LE> BE AC <id 20> <reference RSSI> <reserved>`; the id is zero-padded or cut to 20 bytes.
    public var manufacturerData: [UInt8] {
        let id = Array((beaconID + [UInt8](repeating: 0, count: 20)).prefix(20))
        return [UInt8(companyID & 0xFF), UInt8(companyID >> 8), 0xBE, 0xAC] + id + [referenceRSSI.byte, reserved]
    }

    public func advertisingData(flags: UInt8 = AdvertisingFlags.leOnly) -> [UInt8] {
        var writer = ADWriter()
        writer.appendFlags(flags)
        writer.append(.manufacturerSpecificData, manufacturerData)
        return writer.bytes
    }
}

extension EddystoneFrame {
    /// The Eddystone 16-bit service UUID 0xFEAA (assigned to Google).
    public static let serviceUUID: UInt16 = 0xFEAA
    /// Frame types (github.com/google/eddystone, protocol-specification.md).
    public static let uidType: UInt8 = 0x00
    public static let urlType: UInt8 = 0x10
    public static let tlmType: UInt8 = 0x20

    /// Decodes a 16-bit service data value starting with the UUID (`AA FE …`). Nil for another
    /// service, an encrypted TLM or a frame type Proxima does not read.
    public init?(serviceData: some Collection<UInt8>) throws(DecodeError) {
        let bytes = Array(serviceData)
        let frame = try bytes.withDecodingBuffer { (buffer) throws(DecodeError) -> EddystoneFrame? in
            guard case .eddystone(let frame)? = try FrameScanner.locate(inServiceData: buffer, from: 0, to: buffer.count)?.frame(in: buffer)
            else { return nil }
            return frame
        }
        guard let frame else { return nil }
        self = frame
    }

    /// The service data value `AA FE <frame>`, or nil for a URL that Eddystone cannot carry
    /// (a scheme other than http(s), a non-ASCII character, or more than 17 encoded bytes).
    public var serviceData: [UInt8]? {
        var bytes: [UInt8] = [0xAA, 0xFE]
        switch self {
        case .uid(let namespace, let instance, let txPower):
            bytes += [Self.uidType, UInt8(bitPattern: txPower)]
            bytes += Array((namespace + [UInt8](repeating: 0, count: 10)).prefix(10))
            bytes += Array((instance + [UInt8](repeating: 0, count: 6)).prefix(6))
            bytes += [0, 0]
        case .url(let txPower, let url):
            guard let encoded = EddystoneURLCoding.compress(url),
                  encoded.count - 1 <= EddystoneURLCoding.maximumEncodedLength else { return nil }
            bytes += [Self.urlType, UInt8(bitPattern: txPower)] + encoded
        case .tlm(let telemetry):
            let temperature: UInt16 = telemetry.temperatureCelsius.map {
                UInt16(bitPattern: Int16(clamping: Int(($0 * 256).rounded())))
            } ?? 0x8000
            bytes += [Self.tlmType, 0x00]
            bytes += [UInt8(telemetry.batteryMillivolts >> 8), UInt8(telemetry.batteryMillivolts & 0xFF)]
            bytes += [UInt8(temperature >> 8), UInt8(temperature & 0xFF)]
            for value in [telemetry.advertisingCount, telemetry.uptimeDeciseconds] {
                bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
            }
        }
        return bytes
    }

    /// Flags 0x06, the complete list of 16-bit UUIDs naming 0xFEAA, then the service data.
    public func advertisingData() -> [UInt8]? {
        guard let serviceData else { return nil }
        var writer = ADWriter()
        writer.appendFlags(AdvertisingFlags.leOnly)
        writer.append(.completeServiceUUIDs16, [0xAA, 0xFE])
        writer.append(.serviceData16, serviceData)
        return writer.bytes
    }
}

extension BeaconFrame {
    /// Every beacon frame of every format in advertising data, in order; empty when there is
    /// none. Throws when the AD chain or a frame that claims a format is malformed.
    public static func decodeAll(advertisingData: [UInt8]) throws(DecodeError) -> [BeaconFrame] {
        try advertisingData.withDecodingBuffer { (buffer) throws(DecodeError) -> [BeaconFrame] in
            var frames: [BeaconFrame] = []
            try LocatedFrame.scan(advertisingData: buffer) { frames.append($0.frame(in: buffer)) }
            return frames
        }
    }

    /// The allocation-free entry point: calls `body` with each beacon frame in advertising data.
    /// Frames before a malformed structure have already been delivered when it throws.
    public static func forEachFrame(inAdvertisingData buffer: UnsafeRawBufferPointer,
                                    _ body: (BeaconFrame) -> Void) throws(DecodeError) {
        try LocatedFrame.scan(advertisingData: buffer) { body($0.frame(in: buffer)) }
    }

    /// The advertising data that carries this frame (nil for an Eddystone-URL that cannot be encoded).
    public func advertisingData() -> [UInt8]? {
        switch self {
        case .iBeacon(let frame): frame.advertisingData()
        case .altBeacon(let frame): frame.advertisingData()
        case .eddystone(let frame): frame.advertisingData()
        }
    }
}
