import BeaconKit
import Foundation

/// The body of `POST /v1/sightings`: up to 5,000 sightings, with an optional sequence number
/// the gateway increments per batch so a retried batch is recognised and not counted twice.
public struct SightingBatch: Sendable, Decodable {
    public var sequence: Int?
    public var sightings: [WireSighting]

    public init(sequence: Int?, sightings: [WireSighting]) {
        self.sequence = sequence
        self.sightings = sightings
    }
}

/// One sighting as a gateway sends it: `{"time","receiver","address","rssi","frame":{...}}`.
/// Only iBeacon frames drive monitoring; other formats are accepted and counted.
public struct WireSighting: Sendable, Hashable, Codable {
    public var time: Double
    public var receiver: String
    public var address: String
    public var rssi: Int8?
    public var frame: WireFrame

    public init(time: Double, receiver: String, address: String, rssi: Int8?, frame: WireFrame) {
        self.time = time
        self.receiver = receiver
        self.address = address
        self.rssi = rssi
        self.frame = frame
    }

    enum CodingKeys: String, CodingKey { case time, receiver, address, rssi, frame }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        time = try container.decode(Double.self, forKey: .time)
        guard time.isFinite, time >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .time, in: container, debugDescription: "expected seconds >= 0, found \(time)")
        }
        receiver = try container.decode(String.self, forKey: .receiver)
        guard receiver.utf8.count <= 200 else {
            throw DecodingError.dataCorruptedError(forKey: .receiver, in: container, debugDescription: "expected at most 200 bytes, found \(receiver.utf8.count)")
        }
        address = try container.decode(String.self, forKey: .address)
        guard BluetoothAddress(address) != nil else {
            throw DecodingError.dataCorruptedError(forKey: .address, in: container, debugDescription: "expected a Bluetooth address like AA:BB:CC:DD:EE:FF, found '\(address.prefix(40))'")
        }
        if try container.decodeNil(forKey: .rssi) {
            rssi = nil
        } else {
            let value = try container.decode(Int.self, forKey: .rssi)
            guard let byte = Int8(exactly: value), byte != 127 else {
                throw DecodingError.dataCorruptedError(forKey: .rssi, in: container, debugDescription: "expected dBm in -128…126 or null, found \(value)")
            }
            rssi = byte
        }
        frame = try container.decode(WireFrame.self, forKey: .frame)
    }
}

/// A frame as JSON. iBeacon: `{"type":"iBeacon","uuid","major","minor","measuredPower"}`.
public struct WireFrame: Sendable, Hashable, Codable {
    public var type: String
    public var uuid: UUID?
    public var major: UInt16?
    public var minor: UInt16?
    public var measuredPower: Int8?

    public static let knownTypes: Set<String> = ["iBeacon", "altBeacon", "eddystone"]

    public init(iBeacon identity: BeaconIdentity, measuredPower: MeasuredPower) {
        type = "iBeacon"
        uuid = identity.uuid
        major = identity.major
        minor = identity.minor
        self.measuredPower = measuredPower.dBm
    }

    enum CodingKeys: String, CodingKey { case type, uuid, major, minor, measuredPower }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        guard Self.knownTypes.contains(type) else {
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "expected iBeacon, altBeacon or eddystone, found '\(type.prefix(40))'")
        }
        guard type == "iBeacon" else { return }
        let uuidText = try container.decode(String.self, forKey: .uuid)
        guard let parsed = UUID(uuidString: uuidText) else {
            throw DecodingError.dataCorruptedError(forKey: .uuid, in: container, debugDescription: "expected a UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, found '\(uuidText.prefix(40))'")
        }
        uuid = parsed
        major = try Self.sixteenBits(container, .major)
        minor = try Self.sixteenBits(container, .minor)
        let power = try container.decode(Int.self, forKey: .measuredPower)
        guard let byte = Int8(exactly: power) else {
            throw DecodingError.dataCorruptedError(forKey: .measuredPower, in: container, debugDescription: "expected dBm at 1 m in -128…127, found \(power)")
        }
        measuredPower = byte
    }

    private static func sixteenBits(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> UInt16 {
        let value = try container.decode(Int.self, forKey: key)
        guard let number = UInt16(exactly: value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "expected 0…65535, found \(value)")
        }
        return number
    }

    public var identity: BeaconIdentity? {
        guard type == "iBeacon", let uuid, let major, let minor else { return nil }
        return BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }
}

extension WireSighting {
    public init?(_ sighting: Sighting) {
        guard let frame = sighting.frame.iBeacon else { return nil }
        self.init(time: sighting.time, receiver: sighting.receiver, address: sighting.address.description, rssi: sighting.rssi,
                  frame: WireFrame(iBeacon: frame.identity, measuredPower: frame.measuredPower))
    }
}

/// Turns a decoding failure into "sightings[12].frame.major: expected 0…65535, found 70000".
enum DecodingFailure {
    static func describe(_ error: DecodingError) -> (field: String, reason: String) {
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text.isEmpty ? "body" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return (path(context.codingPath + [key]), "required field is missing")
        case .typeMismatch(let type, let context):
            return (path(context.codingPath), "expected \(describeType(type)), found another JSON type")
        case .valueNotFound(let type, let context):
            return (path(context.codingPath), "expected \(describeType(type)), found null")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return ("body", "not valid JSON")
            }
            return (path(context.codingPath), context.debugDescription)
        @unknown default:
            return ("body", "could not be decoded")
        }
    }

    static func describe(type: Any.Type) -> String { describeType(type) }

    private static func describeType(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Double.Type, is Float.Type: "a number"
        case is Int.Type, is Int8.Type, is UInt16.Type: "an integer"
        case is [WireSighting].Type: "an array of sightings"
        default: "\(type)"
        }
    }
}
