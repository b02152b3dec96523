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
