/// The byte formats a user may paste into `proxima decode`.
public enum InputFormat: String, CaseIterable, Sendable, Hashable, Codable {
    /// Raw advertising data: a chain of AD structures.
    case ad
    /// Manufacturer-specific data, starting with the little-endian company id (`4C 00 …`).
    case mfr
    /// A whole HCI LE Advertising Report or LE Extended Advertising Report event, with or without the H4 byte.
    case hci
    /// An April Brother gateway frame: type, MAC, RSSI, advertising data.
    case gateway

    public var displayName: String {
        switch self {
        case .ad: "advertising data"
        case .mfr: "manufacturer data"
        case .hci: "HCI event"
        case .gateway: "gateway frame"
        }
    }
}

/// One beacon found in an input, with what the carrier said about its sender.
public struct DecodedBeacon: Sendable, Hashable {
    public var frame: BeaconFrame
    public var rssi: Int8?
    public var address: BluetoothAddress?

    public init(frame: BeaconFrame, rssi: Int8? = nil, address: BluetoothAddress? = nil) {
        self.frame = frame
        self.rssi = rssi
        self.address = address
    }
}

/// What one input held.
public struct DecodedInput: Sendable, Hashable {
    public var format: InputFormat
    /// Every beacon of every format, in order.
    public var beacons: [DecodedBeacon]
    /// What the input held besides beacons, in words, e.g. `manufacturer data of company 0x0118`.
    public var contents: [String]

    public var iBeacons: [DecodedBeacon] { beacons.filter { $0.frame.iBeacon != nil } }

    /// Why there is no iBeacon in this input, for a message on standard error.
    public var noIBeaconReason: String {
        let others = beacons.map(\.frame.formatName)
        return "not an iBeacon: " + (others.isEmpty ? "" : "found \(others.joined(separator: ", ")) instead; ") + contentsSummary
    }

    /// Why there is no beacon of any format in this input.
    public var noBeaconReason: String { "no beacon: " + contentsSummary }

    var contentsSummary: String {
        contents.isEmpty ? "the \(format.displayName) is empty"
            : "the \(format.displayName) holds \(contents.joined(separator: "; "))"
    }
}

/// Decodes user input in any of the `InputFormat`s, detecting the format when none is given.
public enum InputDecoder {
    /// Decodes hex text (see `Hex.bytes`).
    public static func decode(hex: String, format: InputFormat? = nil) throws(DecodeError) -> DecodedInput {
        try decode(Hex.bytes(hex), format: format)
    }

    /// With a format, decodes as that format. Without, tries every format whose framing the
    /// bytes fit (HCI event, advertising data, gateway frame, manufacturer data) and keeps the
    /// first that yields a beacon; when none does, reports the first that fits, or the
    /// advertising data error when nothing fits.
    public static func decode(_ bytes: [UInt8], format: InputFormat? = nil) throws(DecodeError) -> DecodedInput {
        if let format { return try decode(bytes, as: format) }
        var first: Result<DecodedInput, DecodeError>? = nil
        for candidate in detectionOrder where fits(bytes, candidate) {
            let outcome = Result { () throws(DecodeError) -> DecodedInput in try decode(bytes, as: candidate) }
            if case .success(let decoded) = outcome, !decoded.beacons.isEmpty { return decoded }
            if first == nil { first = outcome }
        }
        if let first { return try first.get() }
        return try decode(bytes, as: looksLikeHCI(bytes) ? .hci : .ad)
    }

    /// The most specific framing first: an HCI event's header and lengths rarely fit by chance.
    static let detectionOrder: [InputFormat] = [.hci, .ad, .gateway, .mfr]

    static func decode(_ bytes: [UInt8], as format: InputFormat) throws(DecodeError) -> DecodedInput {
        switch format {
        case .ad:
            return DecodedInput(format: .ad, beacons: try BeaconFrame.decodeAll(advertisingData: bytes).map { DecodedBeacon(frame: $0) },
                                contents: try describe(advertisingData: bytes))
        case .mfr:
            let data = try ManufacturerData(value: bytes)
            var writer = ADWriter()
            guard bytes.count <= 254 else {
                throw DecodeError(field: "manufacturer data", offset: 254, expected: "at most 254 bytes", found: "\(bytes.count)")
            }
            writer.append(.manufacturerSpecificData, bytes)
            let frames: [BeaconFrame]
            do {
                frames = try BeaconFrame.decodeAll(advertisingData: writer.bytes)
            } catch {
                throw error.shifted(by: -2)
            }
            return DecodedInput(format: .mfr, beacons: frames.map { DecodedBeacon(frame: $0) }, contents: [describe(data)])
        case .hci:
            // The same reading as a live scan's (LocatedFrame.scan(hciEvent:)): a broken report
            // does not hide the others. With no beacon left to show, its error is the answer.
            let found = try HCIEventFrames(hciEvent: bytes)
            if found.frames.isEmpty, let first = found.malformedReports.first { throw first }
            var contents: [String] = []
            for (index, report) in try AdvertisingReport.decode(hciEvent: bytes).enumerated() {
                guard report.isDataComplete else {
                    contents.append("report \(index + 1): incomplete extended data (not decoded)")
                    continue
                }
                guard let described = try? describe(advertisingData: report.data) else {
                    contents.append("report \(index + 1): malformed advertising data (not decoded)")
                    continue
                }
                contents.append("report \(index + 1): " + (described.isEmpty ? "no data" : described.joined(separator: ", ")))
            }
            let beacons = found.frames.map { DecodedBeacon(frame: $0.frame, rssi: $0.header.rssi, address: $0.header.address) }
            return DecodedInput(format: .hci, beacons: beacons, contents: contents + found.malformedReports.map { "malformed report: \($0)" })
        case .gateway:
            let frame = try GatewayFrame(bytes: bytes)
            do {
                return DecodedInput(format: .gateway,
                                    beacons: try BeaconFrame.decodeAll(advertisingData: frame.advertisingData)
                                        .map { DecodedBeacon(frame: $0, rssi: frame.rssi, address: frame.address) },
                                    contents: try describe(advertisingData: frame.advertisingData))
            } catch {
                throw error.shifted(by: GatewayFrame.headerLength)
            }
        }
    }

    /// Whether the bytes have the framing of a format, so that auto-detection tries it.
    static func fits(_ bytes: [UInt8], _ format: InputFormat) -> Bool {
        switch format {
        case .hci:
            return looksLikeHCI(bytes)
        case .ad:
            return (try? ADStructure.readAll(bytes)) != nil && !bytes.isEmpty && bytes[0] != 0
        case .gateway:
            guard bytes.count > GatewayFrame.headerLength, bytes[0] <= 4 else { return false }
            return (try? ADStructure.readAll(Array(bytes[GatewayFrame.headerLength...]))) != nil
        case .mfr:
            // Any two bytes could be a company id, so only a known beacon layout counts.
            guard bytes.count >= 4 else { return bytes.count >= 2 && bytes[0] == 0x4C && bytes[1] == 0x00 }
            return (bytes[0] == 0x4C && bytes[1] == 0x00) || (bytes[2] == 0xBE && bytes[3] == 0xAC)
                || (bytes[2] == 0x02 && bytes[3] == 0x15)
        }
    }

    /// An H4 event packet (`04`, any event code, a length that matches), an LE Meta event
    /// after `04`, or an LE Meta event without the H4 byte whose length matches.
    static func looksLikeHCI(_ bytes: [UInt8]) -> Bool {
        if bytes.count >= 3, bytes[0] == 0x04, bytes[1] == 0x3E || Int(bytes[2]) == bytes.count - 3 { return true }
        return bytes.count >= 2 && bytes[0] == 0x3E && Int(bytes[1]) == bytes.count - 2
    }

    static func describe(advertisingData bytes: [UInt8]) throws(DecodeError) -> [String] {
        try ADStructure.readAll(bytes).map { structure in
            switch structure.type {
            case .flags where structure.value.count == 1:
                return "flags \(hexByte(structure.value[0]))"
            case .manufacturerSpecificData:
                guard let data = try? ManufacturerData(value: structure.value) else { return "empty manufacturer data" }
                return describe(data)
            case .serviceData16 where structure.value.count >= 2:
                let uuid = UInt16(structure.value[1]) << 8 | UInt16(structure.value[0])
                if uuid == EddystoneFrame.serviceUUID, structure.value.count >= 3 {
                    return "Eddystone service data of frame type \(hexByte(structure.value[2]))"
                }
                return "service data of UUID \(hexWord(uuid))"
            case .completeLocalName, .shortenedLocalName:
                return "name \"\(String(decoding: structure.value, as: UTF8.self))\""
            default:
                return structure.type.description
            }
        }
    }

    static func describe(_ data: ManufacturerData) -> String {
        guard data.company == .apple else {
            return "manufacturer data of company \(data.company), not Apple's 0x004C"
        }
        guard let type = data.payload.first else { return "Apple manufacturer data with no type byte" }
        return "Apple manufacturer data of type \(hexByte(type))" + (type == IBeaconFrame.typeByte ? "" : ", not iBeacon's 0x02")
    }
}
