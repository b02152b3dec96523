import BeaconKit
import NIOCore

extension CompactSightingBatch {
    // MARK: Encoding

    public static func encode(_ batch: SightingBatch) throws(Unencodable) -> ByteBuffer {
        var receivers: [String: UInt16] = [:]
        var names: [String] = []
        for sighting in batch.sightings where receivers[sighting.receiver] == nil {
            guard sighting.receiver.utf8.count <= 255 else {
                throw Unencodable(description: "receiver '\(sighting.receiver.prefix(40))…' is longer than 255 bytes")
            }
            guard names.count < Int(UInt16.max) else { throw Unencodable(description: "more than 65,535 receivers in one batch") }
            receivers[sighting.receiver] = UInt16(names.count)
            names.append(sighting.receiver)
        }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(headerLength + names.count * 16 + batch.sightings.count * (recordPrefixLength + iBeaconBodyLength))
        buffer.writeBytes(magic)
        buffer.writeInteger(version)
        buffer.writeInteger(UInt8(batch.sequence == nil ? 0 : 1))
        buffer.writeInteger(UInt16(names.count))
        buffer.writeInteger(Int64(batch.sequence ?? 0))
        buffer.writeInteger(UInt32(batch.sightings.count))
        for name in names {
            buffer.writeInteger(UInt8(name.utf8.count))
            buffer.writeString(name)
        }
        for sighting in batch.sightings {
            buffer.writeInteger(sighting.time.bitPattern)
            buffer.writeInteger(receivers[sighting.receiver]!)
            let address = sighting.address.rawValue
            buffer.writeInteger(UInt16(truncatingIfNeeded: address >> 32))
            buffer.writeInteger(UInt32(truncatingIfNeeded: address))
            buffer.writeInteger(sighting.rssi ?? rssiNotAvailable)
            switch sighting.frame {
            case .iBeacon(let frame):
                buffer.writeInteger(FrameKind.iBeacon.rawValue)
                let uuid = frame.identity.uuid.uuid
                _ = withUnsafeBytes(of: uuid) { buffer.writeBytes($0) }
                buffer.writeInteger(frame.identity.major)
                buffer.writeInteger(frame.identity.minor)
                buffer.writeInteger(frame.measuredPower.dBm)
            case let other:
                guard let data = other.advertisingData(), data.count <= 255 else {
                    throw Unencodable(description: "a \(other.formatName) frame has no advertising data of at most 255 bytes")
                }
                buffer.writeInteger(FrameKind.advertisingData.rawValue)
                buffer.writeInteger(UInt8(data.count))
                buffer.writeBytes(data)
            }
        }
        return buffer
    }

    /// Reads a whole body from the server's request buffer, without copying it.
    public static func decode(_ buffer: ByteBuffer, limits: Limits) throws(Failure) -> SightingBatch {
        let outcome = buffer.withUnsafeReadableBytes { bytes in
            Result { () throws(Failure) -> SightingBatch in try decode(bytes: bytes, limits: limits) }
        }
        return try outcome.get()
    }
}
