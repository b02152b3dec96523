import BeaconKit
import NIOCore

extension CompactSightingBatch {
    // MARK: Encoding

    /// Encodes a batch. Records are written in one pass into memory reserved for all of them
    /// (a server stores every accepted batch in this form for its after-commit work, so this is
    /// on its hot path); a batch's receiver is looked up once per run of sightings it heard.
    public static func encode(_ batch: SightingBatch) throws(Unencodable) -> ByteBuffer {
        var receivers: [String: UInt16] = [:]
        var names: [String] = []
        var indices: [UInt16] = []
        indices.reserveCapacity(batch.sightings.count)
        var advertisingData: [Int: [UInt8]] = [:]
        var recordBytes = 0
        var last: (name: String, index: UInt16)?
        for (position, sighting) in batch.sightings.enumerated() {
            if let last, last.name == sighting.receiver {
                indices.append(last.index)
            } else if let known = receivers[sighting.receiver] {
                last = (sighting.receiver, known)
                indices.append(known)
            } else {
                guard sighting.receiver.utf8.count <= 255 else {
                    throw Unencodable(description: "receiver '\(sighting.receiver.prefix(40))…' is longer than 255 bytes")
                }
                guard names.count < Int(UInt16.max) else { throw Unencodable(description: "more than 65,535 receivers in one batch") }
                let index = UInt16(names.count)
                receivers[sighting.receiver] = index
                names.append(sighting.receiver)
                last = (sighting.receiver, index)
                indices.append(index)
            }
            switch sighting.frame {
            case .iBeacon:
                recordBytes += recordPrefixLength + iBeaconBodyLength
            case let other:
                guard let data = other.advertisingData(), data.count <= 255 else {
                    throw Unencodable(description: "a \(other.formatName) frame has no advertising data of at most 255 bytes")
                }
                advertisingData[position] = data
                recordBytes += recordPrefixLength + 1 + data.count
            }
        }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(headerLength + names.reduce(0) { $0 + 1 + $1.utf8.count } + recordBytes)
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
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: recordBytes) { bytes in
            var writer = RecordWriter(bytes: bytes)
            for (position, sighting) in batch.sightings.enumerated() {
                writer.put(sighting.time.bitPattern)
                writer.put(indices[position])
                let address = sighting.address.rawValue
                writer.put(UInt16(truncatingIfNeeded: address >> 32))
                writer.put(UInt32(truncatingIfNeeded: address))
                writer.put(UInt8(bitPattern: sighting.rssi ?? rssiNotAvailable))
                if case .iBeacon(let frame) = sighting.frame {
                    writer.put(FrameKind.iBeacon.rawValue)
                    withUnsafeBytes(of: frame.identity.uuid.uuid) { writer.put($0) }
                    writer.put(frame.identity.major)
                    writer.put(frame.identity.minor)
                    writer.put(UInt8(bitPattern: frame.measuredPower.dBm))
                } else if let data = advertisingData[position] {
                    writer.put(FrameKind.advertisingData.rawValue)
                    writer.put(UInt8(data.count))
                    data.withUnsafeBytes { writer.put($0) }
                }
            }
            return writer.offset
        }
        return buffer
    }

    /// Big-endian stores into memory already reserved for every record.
    private struct RecordWriter {
        let bytes: UnsafeMutableRawBufferPointer
        var offset = 0

        mutating func put<Value: FixedWidthInteger>(_ value: Value) {
            bytes.storeBytes(of: value.bigEndian, toByteOffset: offset, as: Value.self)
            offset += MemoryLayout<Value>.size
        }

        mutating func put(_ raw: UnsafeRawBufferPointer) {
            UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<(offset + raw.count)]).copyMemory(from: raw)
            offset += raw.count
        }
    }

    /// Reads a whole body from the server's request buffer, without copying it.
    public static func decode(_ buffer: ByteBuffer, limits: Limits) throws(Failure) -> SightingBatch {
        let outcome = buffer.withUnsafeReadableBytes { bytes in
            Result { () throws(Failure) -> SightingBatch in try decode(bytes: bytes, limits: limits) }
        }
        return try outcome.get()
    }
}
