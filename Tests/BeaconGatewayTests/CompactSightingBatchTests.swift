import BeaconGateway
import BeaconKit
import Foundation
import NIOCore
import Testing

@Suite("Compact sighting batches")
struct CompactSightingBatchTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let limits = CompactSightingBatch.Limits(maxSightings: 5000)

    static func iBeacon(_ time: Double, receiver: String = "door", rssi: Int8? = -60) -> Sighting {
        Sighting(time: time, receiver: receiver, address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: rssi,
                 frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 1001), measuredPower: MeasuredPower(-59))))
    }

    /// Every frame format, both receivers, RSSI present and not available.
    static let mixed: [Sighting] = [
        iBeacon(1_700_000_000.25),
        iBeacon(1_700_000_000.5, receiver: "hall", rssi: nil),
        Sighting(time: 1_700_000_001, receiver: "hall", address: BluetoothAddress("00:11:22:33:44:55")!, rssi: -70,
                 frame: .altBeacon(AltBeaconFrame(companyID: 0x0118, beaconID: Array(1...20), referenceRSSI: MeasuredPower(-65), reserved: 0))),
        Sighting(time: 1_700_000_002, receiver: "door", address: BluetoothAddress("00:11:22:33:44:56")!, rssi: -80,
                 frame: .eddystone(.uid(namespace: Array(0..<10), instance: Array(10..<16), txPowerAt0m: -20))),
        Sighting(time: 1_700_000_003, receiver: "door", address: BluetoothAddress("00:11:22:33:44:57")!, rssi: -81,
                 frame: .eddystone(.tlm(EddystoneTelemetry(batteryMillivolts: 3000, temperatureCelsius: 21.5, advertisingCount: 1234, uptimeDeciseconds: 99)))),
    ]

    @Test(arguments: [nil, 0, 42, 9_007_199_254_740_991])
    func aBatchComesBackAsItWent(sequence: Int?) throws {
        let batch = SightingBatch(sequence: sequence, sightings: Self.mixed)
        let decoded = try CompactSightingBatch.decode(try CompactSightingBatch.encode(batch), limits: Self.limits)
        #expect(decoded.sequence == sequence)
        #expect(decoded.sightings == Self.mixed)
    }

    /// The layout of docs/server.md, byte by byte, for one iBeacon sighting.
    @Test func theBytesAreThoseDocumented() throws {
        let body = try CompactSightingBatch.encode(SightingBatch(sequence: 5, sightings: [Self.iBeacon(1.5)]))
        let expected: [UInt8] = [0x50, 0x58, 0x53, 0x42, 0x01, 0x01, 0x00, 0x01]   // magic, version, flags, 1 receiver
            + [0, 0, 0, 0, 0, 0, 0, 5] + [0, 0, 0, 1]                                 // sequence, 1 sighting
            + [4] + Array("door".utf8)                                                 // receiver 0
            + [0x3F, 0xF8, 0, 0, 0, 0, 0, 0] + [0, 0]                                  // time 1.5, receiver 0
            + [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0x01, 0xC4, 0x01]                         // address, rssi -60, iBeacon
            + [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
            + [0x00, 0x01, 0x03, 0xE9, 0xC5]                                           // major 1, minor 1001, power -59
        #expect(Array(buffer: body) == expected)
        #expect(body.readableBytes == CompactSightingBatch.headerLength + 5 + 39)
    }

    /// Every prefix of a valid body is refused with a field and an offset, never a crash.
    @Test func everyTruncationIsRefused() throws {
        let body = Array(buffer: try CompactSightingBatch.encode(SightingBatch(sequence: 1, sightings: Self.mixed)))
        for length in 0..<body.count {
            #expect(throws: CompactSightingBatch.Failure.self) {
                try CompactSightingBatch.decode(ByteBuffer(bytes: body[..<length]), limits: Self.limits)
            }
        }
    }

    /// Random bodies behind a valid header decode or are refused, but never trap or hang.
    @Test func randomBodiesAreRefusedCleanly() {
        var generator = SplitMix64(seed: 19)
        var refused = 0
        for _ in 0..<2_000 {
            let length = Int(generator.next() % 300)
            // A valid header up to the counts, so the records behind it are what gets read.
            var bytes: [UInt8] = [0x50, 0x58, 0x53, 0x42, 0x01, 0x00, 0x00, UInt8(generator.next() % 3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
            bytes += (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            do {
                _ = try CompactSightingBatch.decode(ByteBuffer(bytes: bytes), limits: Self.limits)
            } catch {
                refused += 1
                #expect(!error.field.isEmpty)
                #expect(error.offset <= bytes.count)
            }
        }
        #expect(refused > 1_000)
    }

    struct Broken: Sendable, CustomTestStringConvertible {
        var name: String
        var edit: @Sendable ([UInt8]) -> [UInt8]
        var field: String
        var offset: Int
        var testDescription: String { name }
    }

    /// One receiver ("door"), so the first sighting starts at 25 and its kind byte is at 42.
    static let broken: [Broken] = [
        Broken(name: "magic", edit: { var b = $0; b[0] = 0x7B; return b }, field: "magic", offset: 0),
        Broken(name: "version", edit: { var b = $0; b[4] = 2; return b }, field: "version", offset: 4),
        Broken(name: "flags", edit: { var b = $0; b[5] = 3; return b }, field: "flags", offset: 5),
        Broken(name: "sequence without flag", edit: { var b = $0; b[5] = 0; return b }, field: "sequence", offset: 8),
        Broken(name: "receiver index", edit: { var b = $0; b[34] = 1; return b }, field: "sightings[0].receiver", offset: 33),
        Broken(name: "frame kind", edit: { var b = $0; b[42] = 9; return b }, field: "sightings[0].frame.kind", offset: 42),
        Broken(name: "second sighting cut", edit: { var b = $0; b[19] = 2; return b }, field: "sightings[1]", offset: 64),
        Broken(name: "trailing bytes", edit: { $0 + [0] }, field: "body", offset: 64),
        Broken(name: "receiver not UTF-8", edit: { var b = $0; b[21] = 0xFF; return b }, field: "receivers[0]", offset: 21),
        Broken(name: "advertising data without a beacon", edit: { Array($0[..<42]) + [2, 3, 0x02, 0x01, 0x06] }, field: "sightings[0].frame", offset: 44),
    ]

    @Test(arguments: broken)
    func eachBrokenFieldIsNamedWithItsOffset(broken: Broken) throws {
        let body = Array(buffer: try CompactSightingBatch.encode(SightingBatch(sequence: 5, sightings: [Self.iBeacon(1.5)])))
        #expect(body.count == 64)
        do {
            _ = try CompactSightingBatch.decode(ByteBuffer(bytes: broken.edit(body)), limits: Self.limits)
            Issue.record("\(broken.name) was accepted")
        } catch {
            #expect(error.field == broken.field, "\(error)")
            #expect(error.offset == broken.offset, "\(error)")
            #expect(error.description.hasPrefix("\(broken.field) at offset \(broken.offset): expected "))
        }
    }

    @Test func tooManySightingsAreRefusedBeforeReadingThem() throws {
        var header = Array(buffer: try CompactSightingBatch.encode(SightingBatch(sequence: nil, sightings: [])))
        header[16...19] = [0xFF, 0xFF, 0xFF, 0xFF]
        do {
            _ = try CompactSightingBatch.decode(ByteBuffer(bytes: header), limits: .init(maxSightings: 10))
            Issue.record("accepted")
        } catch {
            #expect(error.field == "sightings")
            #expect(error.isTooLarge)
        }
    }

    @Test func aTimeOutsideTheWindowNamesItsSighting() throws {
        let batch = SightingBatch(sequence: nil, sightings: [Self.iBeacon(100), Self.iBeacon(5_000), Self.iBeacon(.nan)])
        let body = try CompactSightingBatch.encode(batch)
        do {
            _ = try CompactSightingBatch.decode(body, limits: .init(maxSightings: 10, times: 0...1_000))
            Issue.record("accepted")
        } catch {
            #expect(error.field == "sightings[1].time")
            #expect(error.offset == 25 + 39)
        }
    }
}
