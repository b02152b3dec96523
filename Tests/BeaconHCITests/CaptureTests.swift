import BeaconHCI
import BeaconKit
import Foundation
import Testing

@Suite struct CaptureTests {
    static let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
    static let beacon = IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))
    static let address = BluetoothAddress("C0:FF:EE:00:11:22")!

    /// A scanner's exchange: Reset out, Command Complete in, one advertising report in.
    static let packets: [TimestampedPacket] = [
        TimestampedPacket(microseconds: 1_700_000_000_000_001, direction: .sent, packet: HCICommand(opcode: .reset).packet),
        TimestampedPacket(microseconds: 1_700_000_000_000_500, direction: .received,
                          packet: CommandComplete(numberOfCommandPackets: 1, opcode: .reset, returnParameters: [0]).event.packet),
        TimestampedPacket(microseconds: 1_700_000_001_250_000, direction: .received, packet: HCIPacket(type: .event,
            body: AdvertisingReport.legacyEventPacket([AdvertisingReport(kind: .legacy(eventType: 3), addressType: 0,
                address: address, rssi: -67, data: beacon.advertisingData())]))),
    ]

    static func written(_ format: CaptureFileFormat) throws -> [UInt8] {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-capture-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try format.makeWriter(url: url)
        for packet in packets { try writer.record(packet) }
        try writer.close()
        return [UInt8](try Data(contentsOf: url))
    }

    @Test(arguments: [CaptureFileFormat.btsnoop, .pcap])
    func writtenCapturesReadBackExactly(format: CaptureFileFormat) throws {
        let capture = try CaptureReader.parse(try Self.written(format))
        #expect(capture.packets == Self.packets)
        let sightings = CaptureReplay.allSightings(capture: capture, receiver: "hci0")
        #expect(sightings == [Sighting(time: 1_700_000_001.25, receiver: "hci0", address: Self.address, rssi: -67,
                                       frame: .iBeacon(Self.beacon))])
    }

    @Test func btsnoopHeaderAndFlagsFollowTheFormat() throws {
        let bytes = try Self.written(.btsnoop)
        #expect(Array(bytes[0..<16]) == Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
        // First record: lengths 4 and 4, flags 2 (sent command), drops 0.
        #expect(Array(bytes[16..<32]) == [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 0])
        // Second record (at 16 + 24 + 4) has flags 3: received event.
        #expect(Array(bytes[44 + 8..<44 + 12]) == [0, 0, 0, 3])
    }

    @Test func pcapRecordsCarryTheDirectionWord() throws {
        let bytes = try Self.written(.pcap)
        #expect(Array(bytes[20..<24]) == [201, 0, 0, 0])
        // First record at 24: seconds, microseconds 1, lengths 8 (4 direction + 4 H4), direction 0.
        #expect(Array(bytes[28..<32]) == [1, 0, 0, 0])
        #expect(Array(bytes[32..<40]) == [8, 0, 0, 0, 8, 0, 0, 0])
        #expect(Array(bytes[40..<48]) == [0, 0, 0, 0, 0x01, 0x03, 0x0C, 0x00])
    }

    @Test func btsnoop1001WritesAndReadsBack() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-1001-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try BTSnoopWriter(url: url, datalink: .hci)
        for packet in Self.packets { try writer.record(packet) }
        try writer.close()
        let bytes = [UInt8](try Data(contentsOf: url))
        #expect(Array(bytes[12..<16]) == [0, 0, 0x03, 0xE9])
        // The first record holds the Reset command without its H4 byte: 03 0C 00.
        #expect(Array(bytes[16 + 24..<16 + 27]) == [0x03, 0x0C, 0x00])
        let capture = try CaptureReader.parse(bytes)
        #expect(capture.format == .btsnoop(datalink: 1001))
        #expect(capture.packets == Self.packets)
    }

    @Test func btsnoop1001TakesThePacketTypeFromTheFlags() throws {
        var bytes = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xE9]
        let event: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        bytes += [0, 0, 0, 6, 0, 0, 0, 6, 0, 0, 0, 3, 0, 0, 0, 0]
        bytes += [0x00, 0xDC, 0xDD, 0xB3, 0x0F, 0x2F, 0x80, 0x00 + 0x10] // 1970 + 16 µs
        bytes += event
        let capture = try CaptureReader.parse(bytes)
        #expect(capture.format == .btsnoop(datalink: 1001))
        #expect(capture.packets == [TimestampedPacket(microseconds: 16, direction: .received,
                                                      packet: HCIPacket(type: .event, body: event))])
    }

    @Test func pcap187IsBareH4() throws {
        let event = Self.packets[2].packet.h4Bytes
        var bytes: [UInt8] = [0xA1, 0xB2, 0xC3, 0xD4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 187]
        bytes += [0, 0, 0, 10, 0, 0, 0, 20] + bigEndian(UInt32(event.count)) + bigEndian(UInt32(event.count)) + event
        let capture = try CaptureReader.parse(bytes)
        #expect(capture.format == .pcap(linkType: 187))
        let sightings = CaptureReplay.allSightings(capture: capture, receiver: "sniffer")
        #expect(sightings.map(\.time) == [10.00002])
        #expect(sightings.map(\.frame) == [.iBeacon(Self.beacon)])
    }

    /// One LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR record of an iBeacon on channel 37, byte by byte.
    static func linkLayerRecord(flags: UInt16 = 0x0C13, pduHeader: UInt8 = 0x42, accessAddress: [UInt8] = [0xD6, 0xBE, 0x89, 0x8E]) -> [UInt8] {
        var record: [UInt8] = [
            0x00,                   // RF channel 0 = 2402 MHz, advertising channel 37
            0xBF,                   // signal power −65 dBm
            0xA6,                   // noise power −90 dBm
            0x00,                   // access address offenses
            0xD6, 0xBE, 0x89, 0x8E, // reference access address 0x8E89BED6, little-endian
            UInt8(flags & 0xFF), UInt8(flags >> 8), // flags: dewhitened, signal valid, ref AA valid, CRC checked+valid
        ]
        record += accessAddress
        let data = beacon.advertisingData()
        record += [pduHeader, UInt8(6 + data.count)] // ADV_NONCONN_IND (2) with TxAdd (random), length
        record += address.hciBytes + data
        record += [0x12, 0x34, 0x56]                 // CRC, not rechecked
        return record
    }

    static func pcap256(_ records: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0x00, 0x01, 0, 0]
        for (index, record) in records.enumerated() {
            bytes += [UInt8(index), 0, 0, 0, 0, 0, 0, 0] + littleEndian(UInt32(record.count)) + littleEndian(UInt32(record.count)) + record
        }
        return bytes
    }

    @Test func linkLayerAdvertisementsBecomeReports() throws {
        let capture = try CaptureReader.parse(Self.pcap256([
            Self.linkLayerRecord(),
            Self.linkLayerRecord(flags: 0x0413),                         // CRC checked and bad: dropped
            Self.linkLayerRecord(pduHeader: 0x43),                       // SCAN_REQ: not a report
            Self.linkLayerRecord(accessAddress: [0x01, 0x02, 0x03, 0x04]), // data channel
        ]))
        #expect(capture.format == .pcap(linkType: 256))
        #expect(capture.skippedRecords == 3)
        let sightings = CaptureReplay.allSightings(capture: capture, receiver: "sniffer")
        #expect(sightings == [Sighting(time: 0, receiver: "sniffer", address: Self.address, rssi: -65, frame: .iBeacon(Self.beacon))])
        let report = try AdvertisingReport.decode(hciEvent: capture.packets[0].packet.body)
        #expect(report.first?.kind == .legacy(eventType: 3))
        #expect(report.first?.addressType == 1)
    }

    @Test func signalPowerNotValidMeansRSSINotAvailable() throws {
        let capture = try CaptureReader.parse(Self.pcap256([Self.linkLayerRecord(flags: 0x0C11)]))
        #expect(CaptureReplay.allSightings(capture: capture, receiver: "s").map(\.rssi) == [nil])
    }

    @Test func everyTruncationFailsCleanlyOrReadsAPrefix() throws {
        for format in [CaptureFileFormat.btsnoop, .pcap] {
            let bytes = try Self.written(format)
            for length in 0..<bytes.count {
                do {
                    let capture = try CaptureReader.parse(Array(bytes[..<length]))
                    #expect(Self.packets.starts(with: capture.packets))
                } catch {
                    #expect(error.offset <= length, "\(error)")
                }
            }
        }
    }

    @Test func unknownFilesAreRefusedNamingWhatWasFound() {
        #expect(throws: DecodeError.self) { try CaptureReader.parse([0x0A, 0x0D, 0x0D, 0x0A, 0, 0, 0, 0]) }
        do {
            _ = try CaptureReader.parse(Array("hello world".utf8))
        } catch {
            #expect(error.field == "capture file magic")
            #expect(error.found == "68 65 6C 6C 6F 20 77 6F")
        }
        var wrongLink = PcapWriter.header
        wrongLink[20] = 1
        do {
            _ = try CaptureReader.parse(wrongLink)
            Issue.record("Ethernet captures must be refused")
        } catch {
            #expect(error.description.contains("pcap link type at byte 20"))
        }
    }

    @Test func oversizedRecordLengthIsRefused() throws {
        var bytes = BTSnoopWriter.header
        bytes += [0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 16)
        #expect(throws: DecodeError.self) { try CaptureReader.parse(bytes) }
    }
}

func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
