import BeaconHCI
import BeaconKit
import Foundation
import Testing

@Suite struct SightingDecoderTests {
    /// The report btvirt sent in notes/bluez-emulator.md: `04 3e 2a 02 01 03 00 <addr> 1e <AD> 7f`.
    static func btvirtReport(data: [UInt8]) -> TimestampedPacket {
        let body: [UInt8] = [0x3E, UInt8(12 + data.count - 1 + 1), 0x02, 0x01, 0x03, 0x00, 0x42, 0x00, 0x00, 0x01, 0xAA, 0x00,
                             UInt8(data.count)] + data + [0x7F]
        return TimestampedPacket(microseconds: 2_000_000, direction: .received, packet: HCIPacket(type: .event, body: body))
    }

    @Test func reportBecomesSightingWithRSSINotAvailable() throws {
        let beacon = IBeaconFrame(identity: BeaconIdentity(uuid: UUID(), major: 3, minor: 4), measuredPower: MeasuredPower(-59))
        let packet = Self.btvirtReport(data: beacon.advertisingData())
        #expect(packet.packet.body[1] == 0x2A, "the same length btvirt sent")
        let outcome = SightingDecoder(receiver: "r").decode(packet)
        #expect(outcome.sightings == [Sighting(time: 2, receiver: "r", address: BluetoothAddress("00:AA:01:00:00:42")!,
                                               rssi: nil, frame: .iBeacon(beacon))])
    }

    @Test func brokenAdvertisingDataIsReportedNotFatal() {
        // An AD structure claiming 9 bytes where 2 remain.
        let outcome = SightingDecoder(receiver: "r").decode(Self.btvirtReport(data: [0x02, 0x01, 0x06, 0x09, 0xFF, 0x4C]))
        #expect(outcome.sightings.isEmpty)
        #expect(outcome.malformed.count == 1)
    }

    @Test func sentPacketsAndOtherEventsGiveNothing() {
        var packet = Self.btvirtReport(data: [])
        packet.direction = .sent
        #expect(SightingDecoder(receiver: "r").decode(packet).sightings.isEmpty)
        let complete = TimestampedPacket(microseconds: 0, direction: .received,
                                         packet: HCIPacket(type: .event, body: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]))
        #expect(SightingDecoder(receiver: "r").decode(complete) == SightingDecoder.Outcome())
    }

    @Test func regionPatternsFilterIBeacons() throws {
        let uuid = UUID()
        let pattern = try IdentityPattern(parsing: "\(uuid.uuidString):7")
        #expect(pattern.matches(BeaconIdentity(uuid: uuid, major: 7, minor: 1)))
        #expect(!pattern.matches(BeaconIdentity(uuid: uuid, major: 8, minor: 1)))
        #expect(throws: IdentityPatternError.self) { try IdentityPattern(parsing: "\(uuid.uuidString):70000") }
        #expect(throws: IdentityPatternError.self) { try IdentityPattern(parsing: "not-a-uuid") }
    }
}

@Suite struct ExtendedReportTests {
    /// LE Extended Advertising Report (Core Spec v5.4, Vol 4, Part E, 7.7.65.13) of a legacy
    /// ADV_NONCONN_IND, as a 5.x controller reports it when extended scanning is used.
    @Test func extendedReportGivesTheSameSighting() throws {
        let beacon = IBeaconFrame(identity: BeaconIdentity(uuid: UUID(uuidString: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")!,
                                                           major: 10, minor: 20), measuredPower: MeasuredPower(-77))
        let data = beacon.advertisingData()
        var parameters: [UInt8] = [0x0D, 0x01]        // subevent, one report
        parameters += [0x10, 0x00]                     // Event_Type: legacy PDU, data complete
        parameters += [0x01]                           // random address
        parameters += [0x66, 0x55, 0x44, 0x33, 0x22, 0xC1]
        parameters += [0x01, 0x00, 0xFF, 0x7F]         // primary PHY 1M, no secondary, no SID, TX power n/a
        parameters += [0xC4]                           // RSSI −60 dBm
        parameters += [0x00, 0x00, 0x00]               // no periodic interval, direct address type
        parameters += [0, 0, 0, 0, 0, 0]               // direct address
        parameters += [UInt8(data.count)] + data
        let packet = TimestampedPacket(microseconds: 5_000_000, direction: .received,
                                       packet: HCIEvent(code: .leMeta, parameters: parameters).packet)
        let outcome = SightingDecoder(receiver: "hci0").decode(packet)
        #expect(outcome.malformed.isEmpty)
        #expect(outcome.sightings == [Sighting(time: 5, receiver: "hci0", address: BluetoothAddress("C1:22:33:44:55:66")!,
                                               rssi: -60, frame: .iBeacon(beacon))])
    }
}
