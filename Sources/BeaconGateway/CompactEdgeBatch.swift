import Foundation
import NIOCore

/// ``EdgeBatch`` in binary (`application/vnd.proxima.edge.v1`), what `proxima gateway --edge`
/// posts: a reading is 20 bytes instead of about 200 as JSON, which is what makes 1 Hz summaries
/// smaller than the sightings they summarise. Big-endian, byte by byte (docs/server.md):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | `PXEB` |
/// | 4 | 1 | version, 1 |
/// | 5 | 1 | flags, 0 |
/// | 6 | 2 | identities |
/// | 8 | 2 | changes |
/// | 10 | 2 | readings |
/// | 12 | 8 | sequence (signed) |
/// | 20 | 4 | sightings |
/// | 24 | 8 | settings: ``EdgeBatch/Settings/digest`` of the engine's settings |
/// | … | 20 each | identities: UUID (16), major (2), minor (2) |
/// | … | 11 each | changes: identity index (2), transition (1: 0 enter, 1 exit), time (8, IEEE 754 double) |
/// | … | 20 each | readings: identity index (2), RSSI (1, signed dBm), proximity (1: 0 unknown, 1 immediate, 2 near, 3 far), distance (8, NaN when unknown), time (8) |
///
/// Times and distances travel as the doubles the engine computed, so the server stores exactly
/// what a central step would have. A batch this form cannot carry (an RSSI mean that is not a
/// whole number, more than 65,535 entries) goes as JSON.
public enum CompactEdgeBatch {
    public static let mediaType = "application/vnd.proxima.edge.v1"
    static let magic: [UInt8] = Array("PXEB".utf8)
    static let proximities = ["unknown", "immediate", "near", "far"]

    /// The settings whose digest the batch carries are not known from the bytes alone: the
    /// server compares the digest with its own (`decode` answers it beside the batch).
    public static func encode(_ batch: EdgeBatch) -> ByteBuffer? {
        var identities: [String: Int] = [:]
        var table: [(UUID, UInt16, UInt16)] = []
        func index(_ uuid: UUID, _ major: UInt16, _ minor: UInt16) -> Int {
            let key = "\(uuid.uuidString)/\(major)/\(minor)"
            if let known = identities[key] { return known }
            identities[key] = table.count
            table.append((uuid, major, minor))
            return table.count - 1
        }
        let changes = batch.changes.map { (index($0.uuid, $0.major, $0.minor), $0) }
        let readings = batch.readings.map { (index($0.uuid, $0.major, $0.minor), $0) }
        guard table.count <= 0xFFFF, changes.count <= 0xFFFF, readings.count <= 0xFFFF,
              (0...EdgeBatch.maximumSightings).contains(batch.sightings),
              changes.allSatisfy({ ["enter", "exit"].contains($0.1.transition) }),
              readings.allSatisfy({ $0.1.rssi.rounded() == $0.1.rssi && (-128...127).contains($0.1.rssi) && proximities.contains($0.1.proximity) })
        else { return nil }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(32 + 20 * table.count + 11 * changes.count + 20 * readings.count)
        buffer.writeBytes(magic)
        buffer.writeInteger(UInt8(1))
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt16(table.count))
        buffer.writeInteger(UInt16(changes.count))
        buffer.writeInteger(UInt16(readings.count))
        buffer.writeInteger(Int64(batch.sequence))
        buffer.writeInteger(UInt32(batch.sightings))
        buffer.writeInteger(batch.settings.digest)
        for (uuid, major, minor) in table {
            _ = withUnsafeBytes(of: uuid.uuid) { buffer.writeBytes($0) }
            buffer.writeInteger(major)
            buffer.writeInteger(minor)
        }
        for (identity, change) in changes {
            buffer.writeInteger(UInt16(identity))
            buffer.writeInteger(UInt8(change.transition == "enter" ? 0 : 1))
            buffer.writeInteger(change.time.bitPattern)
        }
        for (identity, reading) in readings {
            buffer.writeInteger(UInt16(identity))
            buffer.writeInteger(Int8(reading.rssi))
            buffer.writeInteger(UInt8(proximities.firstIndex(of: reading.proximity)!))
            buffer.writeInteger((reading.distance ?? .nan).bitPattern)
            buffer.writeInteger(reading.time.bitPattern)
        }
        return buffer
    }

    /// The batch, or a refusal naming the field and the byte offset where it failed.
    public static func decode(_ input: ByteBuffer) throws(EdgeBatch.Refusal) -> (batch: EdgeBatch, settingsDigest: UInt64) {
        var buffer = input
        let start = buffer.readerIndex
        func offset() -> Int { buffer.readerIndex - start }
        func read<T: FixedWidthInteger>(_: T.Type, _ field: String) throws(EdgeBatch.Refusal) -> T {
            guard let value = buffer.readInteger(as: T.self) else {
                throw EdgeBatch.Refusal(field: field, reason: "at offset \(offset()): the batch ends before its \(MemoryLayout<T>.size) bytes")
            }
            return value
        }
        guard buffer.readBytes(length: 4) == magic else {
            throw EdgeBatch.Refusal(field: "body", reason: "at offset 0: expected the magic bytes PXEB of a compact edge batch")
        }
        let version = try read(UInt8.self, "version")
        guard version == 1 else { throw EdgeBatch.Refusal(field: "version", reason: "at offset 4: expected version 1, found \(version)") }
        let flags = try read(UInt8.self, "flags")
        guard flags == 0 else { throw EdgeBatch.Refusal(field: "flags", reason: "at offset 5: expected 0, found \(flags)") }
        let identityCount = Int(try read(UInt16.self, "identities"))
        let changeCount = Int(try read(UInt16.self, "changes"))
        let readingCount = Int(try read(UInt16.self, "readings"))
        let sequence = Int(try read(Int64.self, "sequence"))
        guard sequence >= 0 else { throw EdgeBatch.Refusal(field: "sequence", reason: "at offset 12: expected 0 or more, found \(sequence)") }
        let sightings = Int(try read(UInt32.self, "sightings"))
        let digest = try read(UInt64.self, "settings")
        let expected = 20 * identityCount + 11 * changeCount + 20 * readingCount
        guard buffer.readableBytes == expected else {
            throw EdgeBatch.Refusal(field: "body", reason: "at offset \(offset()): expected \(expected) more bytes for \(identityCount) identities, \(changeCount) changes and \(readingCount) readings, found \(buffer.readableBytes)")
        }
        var table: [(UUID, UInt16, UInt16)] = []
        for _ in 0..<identityCount {
            let bytes = buffer.readBytes(length: 16)!
            let uuid = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            table.append((uuid, try read(UInt16.self, "identities"), try read(UInt16.self, "identities")))
        }
        func identity(_ index: UInt16, _ field: String) throws(EdgeBatch.Refusal) -> (UUID, UInt16, UInt16) {
            guard Int(index) < table.count else {
                throw EdgeBatch.Refusal(field: field, reason: "at offset \(offset() - 2): identity \(index) of \(table.count)")
            }
            return table[Int(index)]
        }
        var changes: [EdgeBatch.Change] = []
        for number in 0..<changeCount {
            let (uuid, major, minor) = try identity(try read(UInt16.self, "changes[\(number)]"), "changes[\(number)].identity")
            let transition = try read(UInt8.self, "changes[\(number)].transition")
            guard transition <= 1 else {
                throw EdgeBatch.Refusal(field: "changes[\(number)].transition", reason: "at offset \(offset() - 1): expected 0 (enter) or 1 (exit), found \(transition)")
            }
            let time = Double(bitPattern: try read(UInt64.self, "changes[\(number)].time"))
            changes.append(EdgeBatch.Change(uuid: uuid, major: major, minor: minor, transition: transition == 0 ? "enter" : "exit", time: time))
        }
        var readings: [EdgeBatch.Reading] = []
        for number in 0..<readingCount {
            let (uuid, major, minor) = try identity(try read(UInt16.self, "readings[\(number)]"), "readings[\(number)].identity")
            let rssi = try read(Int8.self, "readings[\(number)].rssi")
            let proximity = try read(UInt8.self, "readings[\(number)].proximity")
            guard Int(proximity) < proximities.count else {
                throw EdgeBatch.Refusal(field: "readings[\(number)].proximity", reason: "at offset \(offset() - 1): expected 0…3, found \(proximity)")
            }
            let distance = Double(bitPattern: try read(UInt64.self, "readings[\(number)].distance"))
            let time = Double(bitPattern: try read(UInt64.self, "readings[\(number)].time"))
            readings.append(EdgeBatch.Reading(uuid: uuid, major: major, minor: minor, rssi: Double(rssi), distance: distance.isNaN ? nil : distance,
                                              proximity: proximities[Int(proximity)], time: time))
        }
        return (EdgeBatch(sequence: sequence, settings: EdgeBatch.Settings(exitRule: "", beaconLimit: 0), sightings: sightings,
                          changes: changes, readings: readings), digest)
    }
}
