import Foundation
import Testing
@testable import BeaconKit

/// One entry of Fixtures/vectors.json (see Fixtures/README.md for provenance).
struct Vector: Decodable, Sendable, CustomTestStringConvertible {
    struct Expected: Decodable, Sendable, Hashable {
        var uuid: String
        var major: UInt16
        var minor: UInt16
        var power: Int8
        var rssi: Int8?
    }

    var hex: String
    var format: String
    var expect: String
    var source: String
    var uuid: String?
    var major: UInt16?
    var minor: UInt16?
    var power: Int8?
    var rssi: Int8?
    var all_ibeacons: [Expected]?
    var note: String?

    var bytes: [UInt8] { (try? Hex.bytes(hex)) ?? [] }
    var isAccept: Bool { expect == "accept" }
    var testDescription: String { "\(format) \(expect): \(note ?? source)" }

    /// The iBeacons the vector must decode to, in order.
    var expectedBeacons: [Expected] {
        if let all_ibeacons { return all_ibeacons }
        guard let uuid, let major, let minor, let power else { return [] }
        return [Expected(uuid: uuid, major: major, minor: minor, power: power, rssi: rssi)]
    }

    static let all: [Vector] = {
        guard let url = Bundle.module.url(forResource: "vectors", withExtension: "json", subdirectory: "Fixtures"),
              let data = try? Data(contentsOf: url),
              let vectors = try? JSONDecoder().decode([Vector].self, from: data) else { return [] }
        return vectors
    }()
}

@Test func theFixtureHoldsAllThirtyOneVectors() {
    #expect(Vector.all.count == 31)
    #expect(Vector.all.filter(\.isAccept).count == 14)
}

extension Vector {
    var inputFormat: InputFormat {
        switch format {
        case "ad": .ad
        case "mfr": .mfr
        case "hci_le_advertising_report_event": .hci
        default: .gateway
        }
    }
}

private func summaries(_ beacons: [DecodedBeacon]) -> [Vector.Expected] {
    beacons.compactMap { beacon in
        beacon.frame.iBeacon.map {
            Vector.Expected(uuid: $0.identity.uuid.uuidString.lowercased(), major: $0.identity.major,
                            minor: $0.identity.minor, power: $0.measuredPower.dBm, rssi: beacon.rssi)
        }
    }
}

private func withoutRSSI(_ list: [Vector.Expected]) -> [Vector.Expected] {
    list.map { Vector.Expected(uuid: $0.uuid, major: $0.major, minor: $0.minor, power: $0.power, rssi: nil) }
}

@Suite("Vectors of ../shared/data/vectors.json")
struct VectorTests {
    @Test(arguments: Vector.all.filter(\.isAccept))
    func acceptVectorDecodesToExactlyTheExpectedValues(vector: Vector) throws {
        let expected = vector.expectedBeacons
        try #require(!expected.isEmpty)
        for format in [vector.inputFormat, nil] {
            let decoded = try InputDecoder.decode(vector.bytes, format: format)
            let found = summaries(decoded.iBeacons)
            // Only HCI events and gateway frames carry an RSSI; the vectors give it for those.
            #expect(vector.rssi == nil ? withoutRSSI(found) == withoutRSSI(expected) : found == expected,
                    "format \(format?.rawValue ?? "detected")")
            #expect(decoded.format == vector.inputFormat)
        }
    }

    @Test(arguments: Vector.all.filter(\.isAccept))
    func acceptVectorDecodesThroughTheFormatsOwnEntryPoint(vector: Vector) throws {
        let frames: [IBeaconFrame]
        switch vector.inputFormat {
        case .ad:
            frames = try BeaconFrame.decodeAll(advertisingData: vector.bytes).compactMap(\.iBeacon)
        case .mfr:
            frames = [try #require(try IBeaconFrame(manufacturerData: vector.bytes))]
        case .hci:
            frames = try AdvertisingReport.decode(hciEvent: vector.bytes)
                .flatMap { try BeaconFrame.decodeAll(advertisingData: $0.data) }.compactMap(\.iBeacon)
        case .gateway:
            frames = try BeaconFrame.decodeAll(advertisingData: GatewayFrame(bytes: vector.bytes).advertisingData).compactMap(\.iBeacon)
        }
        #expect(frames.map { $0.identity.uuid.uuidString.lowercased() } == vector.expectedBeacons.map(\.uuid))
        #expect(frames.map(\.identity.major) == vector.expectedBeacons.map(\.major))
        #expect(frames.map(\.identity.minor) == vector.expectedBeacons.map(\.minor))
        #expect(frames.map(\.measuredPower.dBm) == vector.expectedBeacons.map(\.power))
        #expect(frames.map(\.measuredPower.isUsableForDistance) == vector.expectedBeacons.map { $0.power < 0 })
    }

    @Test(arguments: Vector.all.filter { !$0.isAccept })
    func rejectVectorIsRejected(vector: Vector) {
        for format in [vector.inputFormat, nil] {
            switch Result(catching: { try InputDecoder.decode(vector.bytes, format: format) }) {
            case .success(let decoded):
                #expect(decoded.iBeacons.isEmpty, "format \(format?.rawValue ?? "detected")")
                #expect(decoded.noIBeaconReason.hasPrefix("not an iBeacon: "))
            case .failure(let error):
                #expect(error is DecodeError)
            }
        }
    }

    @Test func malformedVectorsNameFieldAndOffset() throws {
        #expect(throws: DecodeError(field: "AD structure length", offset: 3, expected: "at most 1 (the bytes left)", found: "3 (0x03)")) {
            try InputDecoder.decode(Hex.bytes("0201060303"))
        }
        #expect(throws: DecodeError(field: "iBeacon major", offset: 20,
                                    expected: "21 bytes of UUID, major, minor and power after 4C 00 02 15", found: "16 bytes")) {
            try IBeaconFrame(manufacturerData: Hex.bytes("4c000215426c7565436861726d426561636f6e73"))
        }
    }

    @Test func anotherHCIEventIsNamed() {
        #expect(throws: DecodeError(field: "HCI event code", offset: 1, expected: "0x3E (LE Meta event)",
                                    found: "0x0E (Command Complete)")) {
            try InputDecoder.decode(hex: "04 0e 04 01 0c 20 00")
        }
    }

    @Test func nonAppleAndNonIBeaconTypesAreNotIBeacons() throws {
        #expect(try IBeaconFrame(manufacturerData: Hex.bytes("15000215426c7565436861726d426561636f6e730efe1355c5")) == nil)
        #expect(try IBeaconFrame(manufacturerData: Hex.bytes("4c001015426c7565436861726d426561636f6e730efe1355c5")) == nil)
    }

    @Test func anIBeaconBesideAnAltBeaconYieldsExactlyOneIBeacon() throws {
        let vector = try #require(Vector.all.first { $0.hex.hasPrefix("043e50") })
        let decoded = try InputDecoder.decode(vector.bytes)
        #expect(decoded.iBeacons.count == 1)
        #expect(decoded.beacons.map(\.frame.formatName) == ["iBeacon", "AltBeacon"])
    }
}
