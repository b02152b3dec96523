import BeaconKit
import Foundation

/// The form in which an outbox row keeps its batch's sightings: every distinct receiver and
/// every distinct emitter (address and frame) once, then per sighting only what changes: the
/// time as the difference of its bit pattern from the one before (exact, and a few bytes when
/// sightings come in time order), the receiver's and the emitter's numbers, and the RSSI.
/// A gateway hears tens of beacons many times over, so a 5,000-sighting batch takes about
/// 6 bytes a sighting here against 39 in the compact upload form; the outbox row is written and
/// deleted for every batch, so its size is the pipeline's cost.
///
/// ```
/// version (1 byte, 1)
/// receivers: count (varint), then each: length (varint) + UTF-8 name
/// emitters:  count (varint), then each: address (6 bytes, big-endian), frame kind (1), then
///            kind 1 iBeacon: UUID (16), major (2), minor (2), measured power (int8)
///            kind 2 advertising data: length (varint) + the AD structures that carry the frame
/// sightings: count (varint), then each: time (zigzag varint of the wrapping difference of its
///            bit pattern from the previous time's, 0 before the first), receiver (varint),
///            emitter (varint), rssi (int8, 127 = not available)
/// ```
enum OutboxSightings {
    static let version: UInt8 = 1
    static let rssiNotAvailable: Int8 = 127

    struct Emitter: Hashable {
        var address: BluetoothAddress
        var frame: BeaconFrame
    }

    /// A frame the form cannot carry (it has no advertising data): the caller keeps JSON instead.
    struct Unencodable: Error {}

    static func encode(_ sightings: [Sighting]) throws(Unencodable) -> [UInt8] {
        var receivers: [String: Int] = [:], receiverNames: [String] = []
        var emitters: [Emitter: Int] = [:], emitterList: [Emitter] = []
        var emitterByAddress: [UInt64: Int] = [:]
        var records: [UInt8] = []
        records.reserveCapacity(sightings.count * 7)
        var previousTime: UInt64 = 0
        var lastReceiver: (name: String, index: Int)?
        // By index, reading fields in place: a loop variable copied (retained and released) each sighting.
        for index in sightings.indices {
            let receiver: Int
            if let lastReceiver, lastReceiver.name == sightings[index].receiver {
                receiver = lastReceiver.index
            } else {
                let name = sightings[index].receiver
                receiver = receivers[name] ?? {
                    receiverNames.append(name)
                    receivers[name] = receiverNames.count - 1
                    return receiverNames.count - 1
                }()
                lastReceiver = (name, receiver)
            }
            // By address first: hashing one integer, where hashing the frame cost a fifth of the encoding.
            let emitter: Int
            let address = sightings[index].address
            if let known = emitterByAddress[address.rawValue], emitterList[known].frame == sightings[index].frame {
                emitter = known
            } else {
                let key = Emitter(address: address, frame: sightings[index].frame)
                emitter = emitters[key] ?? {
                    emitterList.append(key)
                    emitters[key] = emitterList.count - 1
                    return emitterList.count - 1
                }()
                emitterByAddress[address.rawValue] = emitter
            }
            let time = sightings[index].time.bitPattern
            records.appendVarint(zigzag(Int64(bitPattern: time &- previousTime)))
            previousTime = time
            records.appendVarint(UInt64(receiver))
            records.appendVarint(UInt64(emitter))
            records.append(UInt8(bitPattern: sightings[index].rssi ?? rssiNotAvailable))
        }
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(records.count + receiverNames.count * 16 + emitterList.count * 30 + 16)
        bytes.appendVarint(UInt64(receiverNames.count))
        for name in receiverNames {
            bytes.appendVarint(UInt64(name.utf8.count))
            bytes.append(contentsOf: name.utf8)
        }
        bytes.appendVarint(UInt64(emitterList.count))
        for emitter in emitterList {
            let address = emitter.address.rawValue
            for shift in stride(from: 40, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: address >> UInt64(shift))) }
            if case .iBeacon(let frame) = emitter.frame {
                bytes.append(1)
                withUnsafeBytes(of: frame.identity.uuid.uuid) { bytes.append(contentsOf: $0) }
                bytes.append(UInt8(frame.identity.major >> 8))
                bytes.append(UInt8(truncatingIfNeeded: frame.identity.major))
                bytes.append(UInt8(frame.identity.minor >> 8))
                bytes.append(UInt8(truncatingIfNeeded: frame.identity.minor))
                bytes.append(UInt8(bitPattern: frame.measuredPower.dBm))
            } else {
                guard let data = emitter.frame.advertisingData() else { throw Unencodable() }
                bytes.append(2)
                bytes.appendVarint(UInt64(data.count))
                bytes.append(contentsOf: data)
            }
        }
        bytes.appendVarint(UInt64(sightings.count))
        bytes.append(contentsOf: records)
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> [Sighting] {
        var reader = Reader(bytes: bytes)
        let version = try reader.byte("version")
        guard version == Self.version else { throw reader.failure("version", "expected \(Self.version), found \(version)") }
        let receiverCount = try reader.count("receivers", smallest: 1)
        var receivers: [String] = []
        for index in 0..<receiverCount {
            let length = try reader.count("receivers[\(index)]", smallest: 1)
            let name = try reader.take(length, "receivers[\(index)]")
            guard let text = String(validating: name, as: UTF8.self) else { throw reader.failure("receivers[\(index)]", "invalid UTF-8") }
            receivers.append(text)
        }
        let emitterCount = try reader.count("emitters", smallest: 8)
        var emitters: [Emitter] = []
        for index in 0..<emitterCount {
            let address = try reader.take(6, "emitters[\(index)].address").reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let kind = try reader.byte("emitters[\(index)].kind")
            let frame: BeaconFrame
            switch kind {
            case 1:
                let body = Array(try reader.take(21, "emitters[\(index)].frame"))
                let uuid = UUID(uuid: (body[0], body[1], body[2], body[3], body[4], body[5], body[6], body[7],
                                       body[8], body[9], body[10], body[11], body[12], body[13], body[14], body[15]))
                let identity = BeaconIdentity(uuid: uuid, major: UInt16(body[16]) << 8 | UInt16(body[17]),
                                              minor: UInt16(body[18]) << 8 | UInt16(body[19]))
                frame = .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(Int8(bitPattern: body[20]))))
            case 2:
                let length = try reader.count("emitters[\(index)].frame", smallest: 1)
                let data = try reader.take(length, "emitters[\(index)].frame")
                guard let first = try BeaconFrame.decodeAll(advertisingData: Array(data)).first else {
                    throw reader.failure("emitters[\(index)].frame", "advertising data with no beacon frame")
                }
                frame = first
            default:
                throw reader.failure("emitters[\(index)].kind", "expected 1 or 2, found \(kind)")
            }
            emitters.append(Emitter(address: BluetoothAddress(rawValue: address), frame: frame))
        }
        let count = try reader.count("sightings", smallest: 4)
        var sightings: [Sighting] = []
        sightings.reserveCapacity(count)
        var time: UInt64 = 0
        for index in 0..<count {
            time = time &+ UInt64(bitPattern: unzigzag(try reader.varint("sightings[\(index)].time")))
            let receiver = Int(clamping: try reader.varint("sightings[\(index)].receiver"))
            let emitter = Int(clamping: try reader.varint("sightings[\(index)].emitter"))
            let rssi = Int8(bitPattern: try reader.byte("sightings[\(index)].rssi"))
            guard receiver < receivers.count else { throw reader.failure("sightings[\(index)].receiver", "no receiver \(receiver)") }
            guard emitter < emitters.count else { throw reader.failure("sightings[\(index)].emitter", "no emitter \(emitter)") }
            sightings.append(Sighting(time: Double(bitPattern: time), receiver: receivers[receiver], address: emitters[emitter].address,
                                      rssi: rssi == rssiNotAvailable ? nil : rssi, frame: emitters[emitter].frame))
        }
        guard reader.offset == bytes.count else { throw reader.failure("sightings", "\(bytes.count - reader.offset) bytes after the last sighting") }
        return sightings
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }

    /// Bounds-checked reads; every failure names the field and its byte offset.
    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        func failure(_ field: String, _ detail: String) -> RegistryError {
            RegistryError(.invalid, field: "batch_outbox.sightings", "\(field) at offset \(offset): \(detail)")
        }

        mutating func byte(_ field: String) throws -> UInt8 {
            guard offset < bytes.count else { throw failure(field, "the end of the data") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: Int, _ field: String) throws -> ArraySlice<UInt8> {
            guard count <= bytes.count - offset else { throw failure(field, "\(count) bytes wanted, \(bytes.count - offset) left") }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }

        mutating func varint(_ field: String) throws -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                let next = try byte(field)
                value |= UInt64(next & 0x7F) << UInt64(shift)
                if next & 0x80 == 0 { return value }
            }
            throw failure(field, "a varint longer than 10 bytes")
        }

        /// A count that the bytes left could hold at `smallest` bytes an item.
        mutating func count(_ field: String, smallest: Int) throws -> Int {
            let value = try varint(field)
            guard value <= UInt64((bytes.count - offset) / smallest) else {
                throw failure(field, "\(value) items cannot fit in the \(bytes.count - offset) bytes left")
            }
            return Int(value)
        }
    }
}

extension [UInt8] {
    mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(UInt8(rest))
    }
}
