import BeaconKit
import Foundation

/// One HTTP post of an April Brother BLE gateway (AB BLE Gateway V4 and its successors), in
/// MessagePack (`application/msgpack`, the firmware's default) or JSON (`application/json`).
/// Both are a map with `v` (firmware), `mid` (message id), `time` (boot time), `ip`, `mac` (the
/// gateway's own) and `devices`: one entry per advertisement heard. In MessagePack an entry is
/// the raw frame (`GatewayFrame`: type, MAC, RSSI, advertising data) as binary; in JSON it is
/// the same frame as a hex string, or the array `[type, "MAC", rssi, "advertising data hex"]`.
/// Sources and firmware versions: docs/server.md.
public struct AprilBrotherUpload: Sendable, Hashable {
    public var firmware: String?
    public var messageID: Int64?
    public var gatewayMAC: String?
    public var frames: [GatewayFrame]

    /// The longest frame taken: the 8-byte header and an extended advertisement's 255 bytes.
    public static let maxFrameLength = GatewayFrame.headerLength + 255

    public init(firmware: String?, messageID: Int64?, gatewayMAC: String?, frames: [GatewayFrame]) {
        self.firmware = firmware
        self.messageID = messageID
        self.gatewayMAC = gatewayMAC
        self.frames = frames
    }

    public static func decode(messagePack bytes: [UInt8], maxDevices: Int) throws -> AprilBrotherUpload {
        let root: MessagePackValue
        do {
            root = try MessagePackReader.read(bytes)
        } catch {
            throw ServerInputError(field: "body", reason: "\(error)")
        }
        return try decode(root, maxDevices: maxDevices)
    }

    public static func decode(json bytes: [UInt8], maxDevices: Int) throws -> AprilBrotherUpload {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes))
        } catch {
            throw ServerInputError(field: "body", reason: "expected an April Brother JSON upload {\"devices\":[…]}, found malformed JSON")
        }
        return try decode(MessagePackValue(json: object), maxDevices: maxDevices)
    }

    static func decode(_ root: MessagePackValue, maxDevices: Int) throws -> AprilBrotherUpload {
        guard case .map = root else {
            throw ServerInputError(field: "body", reason: "expected a map with \"devices\", found \(root.kindName)")
        }
        guard let devices = root["devices"] else {
            throw ServerInputError(field: "devices", reason: "expected an array of advertisements, found none")
        }
        guard case .array(let entries) = devices else {
            throw ServerInputError(field: "devices", reason: "expected an array of advertisements, found \(devices.kindName)")
        }
        guard entries.count <= maxDevices else {
            throw APIError(.contentTooLarge, field: "devices", "expected at most \(maxDevices) advertisements per upload, found \(entries.count)")
        }
        var frames: [GatewayFrame] = []
        frames.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            frames.append(try frame(entry, field: "devices[\(index)]"))
        }
        return AprilBrotherUpload(firmware: root["v"]?.text, messageID: root["mid"]?.integer,
                                  gatewayMAC: root["mac"]?.text, frames: frames)
    }

    static func frame(_ entry: MessagePackValue, field: String) throws -> GatewayFrame {
        let bytes: [UInt8]
        switch entry {
        case .binary(let data):
            bytes = data
        case .string(let hex):
            guard let data = try? Hex.bytes(hex) else {
                throw ServerInputError(field: field, reason: "expected the frame as hex, found '\(hex.prefix(40))'")
            }
            bytes = data
        case .array(let parts):
            bytes = try fields(parts, field: field)
        default:
            throw ServerInputError(field: field, reason: "expected a frame (binary, hex text or [type, mac, rssi, data]), found \(entry.kindName)")
        }
        guard bytes.count <= maxFrameLength else {
            throw ServerInputError(field: field, reason: "expected at most \(maxFrameLength) bytes, found \(bytes.count)")
        }
        do {
            return try GatewayFrame(bytes: bytes)
        } catch {
            throw ServerInputError(field: field, reason: "\(error)")
        }
    }

    /// `[type, "AABBCCDDEEFF", rssi, "0201…"]` back into the raw frame's bytes.
    static func fields(_ parts: [MessagePackValue], field: String) throws -> [UInt8] {
        guard parts.count == 4 else {
            throw ServerInputError(field: field, reason: "expected [type, mac, rssi, data], found \(parts.count) elements")
        }
        guard let type = parts[0].integer, (0...255).contains(type) else {
            throw ServerInputError(field: field + "[0]", reason: "expected the advertisement type 0…4, found \(parts[0].kindName)")
        }
        guard let mac = parts[1].text, let address = BluetoothAddress(mac) ?? BluetoothAddress(Self.colons(mac)) else {
            throw ServerInputError(field: field + "[1]", reason: "expected a MAC like C8FD1949A530, found \(parts[1].kindName)")
        }
        guard let rssi = parts[2].integer, (-128...127).contains(rssi) else {
            throw ServerInputError(field: field + "[2]", reason: "expected RSSI in -128…127 dBm, found \(parts[2].kindName)")
        }
        guard let hex = parts[3].text, let data = try? Hex.bytes(hex) else {
            throw ServerInputError(field: field + "[3]", reason: "expected the advertising data as hex, found \(parts[3].kindName)")
        }
        let frame = GatewayFrame(advertisementType: UInt8(type), address: address, rssi: Int8(rssi), advertisingData: data)
        return frame.bytes
    }

    static func colons(_ mac: String) -> String {
        guard mac.count == 12 else { return mac }
        var result = ""
        for (index, character) in mac.enumerated() {
            if index > 0, index % 2 == 0 { result.append(":") }
            result.append(character)
        }
        return result
    }

    /// The beacons in the frames, as sightings of `receiver` at `time` (the gateway sends only
    /// its boot time, so the server's clock stamps them). Frames with no beacon, or whose
    /// advertising data is malformed, are skipped and counted: a gateway forwards every
    /// advertisement around it, and one broken neighbour must not lose the others.
    public func sightings(receiver: String, time: Double) -> (sightings: [Sighting], skipped: Int) {
        var sightings: [Sighting] = []
        sightings.reserveCapacity(frames.count)
        var skipped = 0
        for frame in frames {
            guard let beacons = try? BeaconFrame.decodeAll(advertisingData: frame.advertisingData), !beacons.isEmpty else {
                skipped += 1
                continue
            }
            for beacon in beacons {
                sightings.append(Sighting(time: time, receiver: receiver, address: frame.address, rssi: frame.rssi, frame: beacon))
            }
        }
        return (sightings, skipped)
    }
}

extension MessagePackValue {
    /// JSONSerialization's objects in the same shape, so one reading serves both forms.
    init(json: Any) {
        switch json {
        case let text as String: self = .string(text)
        case let number as NSNumber:
            // Booleans read as 0 or 1 here; no field of the upload is a boolean.
            if let integer = Int64(exactly: number.doubleValue) { self = .int(integer) } else { self = .double(number.doubleValue) }
        case let array as [Any]: self = .array(array.map(MessagePackValue.init(json:)))
        case let object as [String: Any]: self = .map(object.map { (key: .string($0.key), value: MessagePackValue(json: $0.value)) })
        default: self = .null
        }
    }

    var text: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var integer: Int64? {
        switch self {
        case .int(let value): value
        case .uint(let value): Int64(exactly: value)
        default: nil
        }
    }

    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int(let value): "\(value)"
        case .uint(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let text): "'\(text.prefix(40))'"
        case .binary(let data): "\(data.count) bytes of binary"
        case .array(let items): "an array of \(items.count)"
        case .map: "a map"
        case .extended(let type, _): "an extension value of type \(type)"
        }
    }
}
