import BeaconKit
import Foundation

/// One device report of an ESPresense node: topic `espresense/devices/<id>/<room>`, a JSON
/// object with at least `id` and `rssi`, usually `rssi@1m` and `distance` (fields as
/// ESPresense's documentation and its `BleFingerprint::fill` give them; docs/mqtt.md). Read
/// from the network, so every field is checked and a refusal names the field.
public struct ESPresenseReport: Sendable, Hashable {
    public var id: String
    /// The node's room, the topic's last level.
    public var room: String
    public var rssi: Int
    /// The device's advertised (or configured) RSSI at 1 m, when the node sent it.
    public var rssiAtOneMetre: Int?
    /// The node's filtered distance in metres, when it sent one.
    public var distance: Double?
    /// The advertiser's address (`mac`, 12 hex digits), when the node sent it.
    public var address: BluetoothAddress?

    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var field: String
        public var reason: String
        public var description: String { "ESPresense report: \(field): \(reason)" }
    }

    public init(id: String, room: String, rssi: Int, rssiAtOneMetre: Int? = nil, distance: Double? = nil, address: BluetoothAddress? = nil) {
        self.address = address
        self.id = id
        self.room = room
        self.rssi = rssi
        self.rssiAtOneMetre = rssiAtOneMetre
        self.distance = distance
    }

    /// Parses a message published under `root` (`espresense` unless the nodes were set up
    /// otherwise).
    public init(topic: String, payload: [UInt8], root: String = "espresense") throws(Refusal) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.count == 4, levels[0] == root, levels[1] == "devices" else {
            throw Refusal(field: "topic", reason: "expected \(root)/devices/<id>/<room>, found '\(topic.prefix(200))'")
        }
        guard !levels[2].isEmpty else { throw Refusal(field: "topic", reason: "the device id level is empty") }
        guard !levels[3].isEmpty else { throw Refusal(field: "topic", reason: "the room level is empty") }
        guard payload.count <= 4096 else { throw Refusal(field: "payload", reason: "\(payload.count) bytes, more than a report's 4096") }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(payload))
        } catch let DecodingError.keyNotFound(key, _) {
            throw Refusal(field: key.stringValue, reason: "missing")
        } catch let DecodingError.typeMismatch(type, context) {
            throw Refusal(field: Self.field(context), reason: "expected \(type == String.self ? "a string" : "a number")")
        } catch let DecodingError.valueNotFound(_, context) {
            throw Refusal(field: Self.field(context), reason: "expected a value, found null")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw Refusal(field: Self.field(context), reason: "not a valid value")
        } catch {
            throw Refusal(field: "payload", reason: "expected a JSON object, found '\(String(decoding: payload.prefix(80), as: UTF8.self))'")
        }
        guard !body.id.isEmpty else { throw Refusal(field: "id", reason: "empty") }
        guard body.id == levels[2] else {
            throw Refusal(field: "id", reason: "'\(body.id.prefix(80))' is not the topic's device '\(levels[2].prefix(80))'")
        }
        id = body.id
        room = levels[3]
        rssi = try Self.decibels(body.rssi, field: "rssi", in: -127 ... -1)
        if let atOneMetre = body.rssiAtOneMetre { rssiAtOneMetre = try Self.decibels(atOneMetre, field: "rssi@1m", in: -127 ... 20) }
        if let metres = body.distance {
            guard metres.isFinite, metres >= 0, metres < 1000 else {
                throw Refusal(field: "distance", reason: "expected metres in [0, 1000), found \(metres)")
            }
            distance = metres
        }
        if let mac = body.mac {
            guard mac.count == 12, let value = UInt64(mac, radix: 16) else {
                throw Refusal(field: "mac", reason: "expected 12 hex digits, found '\(mac.prefix(40))'")
            }
            address = BluetoothAddress(rawValue: value)
        }
    }

    /// The fields read; ESPresense sends more (`raw`, `speed`, `mac`, `interval`, …).
    private struct Body: Decodable {
        var id: String
        var rssi: Double
        var rssiAtOneMetre: Double?
        var distance: Double?
        var mac: String?

        enum CodingKeys: String, CodingKey {
            case id, rssi, distance, mac
            case rssiAtOneMetre = "rssi@1m"
        }
    }

    private static func field(_ context: DecodingError.Context) -> String {
        context.codingPath.first?.stringValue ?? "payload"
    }

    /// Nodes send whole dBm (a median of integers may end in .5, hence rounding).
    private static func decibels(_ value: Double, field: String, in range: ClosedRange<Int>) throws(Refusal) -> Int {
        guard value.isFinite, value.rounded() >= Double(range.lowerBound), value.rounded() <= Double(range.upperBound) else {
            throw Refusal(field: field, reason: "expected dBm in \(range.lowerBound)…\(range.upperBound), found \(value)")
        }
        return Int(value.rounded())
    }
}

extension ESPresenseReport {
    /// The iBeacon an ESPresense id names (`iBeacon:<uuid>-<major>-<minor>`, optionally
    /// followed by `-<power>` as some node versions append), or nil for other kinds of device.
    public var beaconIdentity: BeaconIdentity? {
        guard id.hasPrefix("iBeacon:") else { return nil }
        let rest = id.dropFirst("iBeacon:".count)
        // A UUID is 36 characters with its own four hyphens; major and minor follow it.
        guard rest.count > 37, let uuid = UUID(uuidString: String(rest.prefix(36))), rest.dropFirst(36).first == "-" else { return nil }
        let numbers = rest.dropFirst(37).split(separator: "-", omittingEmptySubsequences: false)
        guard numbers.count == 2 || numbers.count == 3, let major = UInt16(numbers[0]), let minor = UInt16(numbers[1]) else { return nil }
        return BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    /// The report as a sighting by the node's room, at `time` (the report carries none): the
    /// iBeacon named by its id, with its RSSI at 1 m as measured power (−59 dBm, Apple's
    /// default, when the node sent none); nil for a device that is not an iBeacon. The address
    /// is the node's `mac` when given, else one made from the id, so one device keeps one address.
    public func sighting(at time: Double, address: BluetoothAddress? = nil) -> Sighting? {
        guard let identity = beaconIdentity else { return nil }
        let power = MeasuredPower(Int8(clamping: rssiAtOneMetre ?? -59))
        let stand = address ?? self.address ?? BluetoothAddress(rawValue: UInt64(FNV1a.hash(id)) | 0x0200_0000_0000)
        return Sighting(time: time, receiver: room, address: stand, rssi: Int8(clamping: rssi),
                        frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: power)))
    }
}
