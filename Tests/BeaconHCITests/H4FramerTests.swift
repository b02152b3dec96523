import BeaconHCI
import Testing

@Suite struct H4FramerTests {
    /// An LE Advertising Report as btvirt sent it (notes/bluez-emulator.md), then a Command
    /// Complete for Reset: two packets back to back.
    static let stream: [UInt8] = [0x04, 0x3E, 0x0C, 0x02, 0x01, 0x03, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x00, 0x7F,
                                  0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]

    @Test func wholeStreamGivesBothPackets() throws {
        var framer = H4Framer()
        let packets = try framer.append(Self.stream)
        #expect(packets.map(\.type) == [.event, .event])
        #expect(packets.map(\.h4Bytes).flatMap { $0 } == Self.stream)
        #expect(framer.pendingByteCount == 0)
    }

    @Test func everySplitPointGivesTheSamePackets() throws {
        var whole = H4Framer()
        let expected = try whole.append(Self.stream)
        for first in 0...Self.stream.count {
            for second in first...Self.stream.count {
                var framer = H4Framer()
                var packets = try framer.append(Self.stream[..<first])
                packets += try framer.append(Self.stream[first..<second])
                packets += try framer.append(Self.stream[second...])
                #expect(packets == expected, "split at \(first) and \(second)")
            }
        }
    }

    @Test func byteByByteGivesTheSamePackets() throws {
        var framer = H4Framer()
        var packets: [HCIPacket] = []
        for byte in Self.stream { packets += try framer.append([byte]) }
        #expect(packets.count == 2)
    }

    @Test func garbageFailsNamingOffsetAndByte() throws {
        var framer = H4Framer()
        _ = try framer.append(Self.stream.prefix(15))
        #expect(throws: H4FramingError(offset: 15, found: 0xFF)) {
            try framer.append([0xFF, 0x04, 0x0E])
        }
    }

    @Test func resynchronisingDropsGarbageAndCountsIt() throws {
        var framer = H4Framer(policy: .resynchronize)
        let packets = try framer.append([0x00, 0xFF, 0x80] + Self.stream)
        #expect(packets.count == 2)
        #expect(framer.droppedBytes == 3)
    }

    @Test func aclLengthIsLittleEndianSixteenBits() throws {
        var framer = H4Framer()
        let payload = [UInt8](repeating: 0xAB, count: 0x0102)
        let packets = try framer.append([0x02, 0x01, 0x20, 0x02, 0x01] + payload)
        #expect(packets.count == 1)
        #expect(packets.first?.body.count == 4 + 0x0102)
    }
}
