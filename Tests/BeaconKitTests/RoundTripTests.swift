import Foundation
import Testing
@testable import BeaconKit

/// SplitMix64, so that every run checks the same identities and a failure can be replayed.
typealias SeededGenerator = SplitMix64

private func randomFrames(count: Int, seed: UInt64) -> [IBeaconFrame] {
    var generator = SeededGenerator(state: seed)
    return (0..<count).map { _ in
        var uuidBytes = [UInt8](repeating: 0, count: 16)
        for index in uuidBytes.indices { uuidBytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        let uuid = uuidBytes.withUnsafeBytes { UnsafeRawBufferPointer($0).getUUID(at: 0) }
        return IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: .random(in: .min ... .max, using: &generator),
                                                     minor: .random(in: .min ... .max, using: &generator)),
                            measuredPower: MeasuredPower(.random(in: .min ... .max, using: &generator)))
    }
}

@Suite("Round trips")
struct RoundTripTests {
    static let frames = randomFrames(count: 500, seed: 0x1BEAC0)

    @Test func advertisingDataRoundTrips() throws {
        for (index, frame) in Self.frames.enumerated() {
            let flags: UInt8 = index.isMultiple(of: 2) ? 0x1A : 0x06
            let data = frame.advertisingData(flags: flags)
            #expect(data.count == 30)
            #expect(try IBeaconFrame(advertisingData: data) == frame)
            #expect(try IBeaconFrame(manufacturerData: frame.manufacturerData) == frame)
            #expect(try InputDecoder.decode(hex: Hex.string(data, separator: " ")).iBeacons.map(\.frame) == [.iBeacon(frame)])
        }
    }

    @Test func hciEventsRoundTripWithRSSI() throws {
        var generator = SeededGenerator(state: 7)
        let reports = Self.frames.map { frame in
            let rssi = Int8.random(in: -127...20, using: &generator)
            return AdvertisingReport(kind: .legacy(eventType: 3), addressType: 1,
                                     address: BluetoothAddress(rawValue: generator.next()),
                                     rssi: rssi == -127 ? nil : rssi, data: frame.advertisingData())
        }
        let packets = AdvertisingReport.legacyEventPackets(reports)
        #expect(packets.count > 1)
        let decoded = try packets.flatMap { try AdvertisingReport.decode(hciEvent: [0x04] + $0) }
        #expect(decoded == reports)
        var sightings: [(ReportHeader, BeaconFrame)] = []
        for packet in packets {
            try packet.withUnsafeBytes { buffer in
                try BeaconFrame.forEachFrame(inHCIEvent: buffer) { sightings.append(($0, $1)) }
            }
        }
        #expect(sightings.map(\.1) == Self.frames.map { .iBeacon($0) })
        #expect(sightings.map(\.0.rssi) == reports.map(\.rssi))
    }

    @Test func gatewayFramesRoundTrip() throws {
        for frame in Self.frames.prefix(50) {
            let gateway = GatewayFrame(advertisementType: 3, address: BluetoothAddress("12:34:56:78:9A:BC")!, rssi: -70,
                                       advertisingData: frame.advertisingData())
            #expect(try GatewayFrame(bytes: gateway.bytes) == gateway)
            let decoded = try InputDecoder.decode(gateway.bytes)
            #expect(decoded.format == .gateway)
            #expect(decoded.iBeacons == [DecodedBeacon(frame: .iBeacon(frame), rssi: -70, address: gateway.address)])
        }
    }

    @Test func jsonRoundTrips() throws {
        for frame in Self.frames.prefix(50) {
            let beacon = DecodedBeacon(frame: .iBeacon(frame), rssi: -60, address: BluetoothAddress(rawValue: 1))
            #expect(try JSONDecoder().decode(DecodedBeacon.self, from: Data(beacon.jsonLine.utf8)) == beacon)
        }
    }
}
