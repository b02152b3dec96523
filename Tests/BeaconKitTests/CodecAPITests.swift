import Foundation
import Testing
@testable import BeaconKit

private let airLocate = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

@Suite("iBeacon encoding")
struct IBeaconEncodingTests {
    @Test func theBooksExampleEncodesByteExactly() throws {
        let frame = IBeaconFrame(identity: BeaconIdentity(uuid: airLocate, major: 0, minor: 0),
                                 measuredPower: MeasuredPower(-59))
        #expect(Hex.string(frame.advertisingData()) == "02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000000000c5")
        #expect(frame.advertisingData().count == 30)
    }

    @Test func flagsAreSelectable() {
        let frame = IBeaconFrame(identity: BeaconIdentity(uuid: airLocate, major: 1, minor: 2))
        #expect(Array(frame.advertisingData(flags: 0x06).prefix(3)) == [0x02, 0x01, 0x06])
        #expect(Array(frame.advertisingData().prefix(3)) == [0x02, 0x01, 0x1A])
    }

    @Test func majorAndMinorAreBigEndian() {
        let frame = IBeaconFrame(identity: BeaconIdentity(uuid: airLocate, major: 0x1234, minor: 0xABCD),
                                 measuredPower: MeasuredPower(-1))
        #expect(Array(frame.manufacturerData.suffix(5)) == [0x12, 0x34, 0xAB, 0xCD, 0xFF])
    }
}

@Suite("AD structures")
struct ADStructureTests {
    @Test func readsTheWholeChain() throws {
        let structures = try ADStructure.readAll(try Hex.bytes("020106 0303aafe 0409414243"))
        #expect(structures.map(\.type) == [.flags, .completeServiceUUIDs16, .completeLocalName])
        #expect(structures.map(\.offset) == [0, 3, 7])
        #expect(structures[2].value == Array("ABC".utf8))
    }

    @Test func refusesALengthPastTheEnd() {
        #expect(throws: DecodeError(field: "AD structure length", offset: 3, expected: "at most 1 (the bytes left)", found: "3 (0x03)")) {
            try ADStructure.readAll([0x02, 0x01, 0x06, 0x03, 0x03])
        }
    }

    @Test func zeroLengthEndsTheDataButOnlyPaddingMayFollow() throws {
        #expect(try ADStructure.readAll([0x02, 0x01, 0x06, 0x00, 0x00]).count == 1)
        #expect(throws: DecodeError.self) { try ADStructure.readAll([0x02, 0x01, 0x06, 0x00, 0x07]) }
    }

    @Test func writerAndReaderAgree() throws {
        var writer = ADWriter()
        writer.appendFlags(0x06)
        writer.appendManufacturerData(company: .apple, payload: [0x10, 0x01, 0x02])
        let data = try ManufacturerData.all(in: writer.bytes)
        #expect(data == [ManufacturerData(company: .apple, payload: [0x10, 0x01, 0x02])])
    }
}

@Suite("Other beacon formats")
struct OtherFormatTests {
    @Test func altBeaconRoundTrips() throws {
        let frame = AltBeaconFrame(companyID: 0x0118, beaconID: Array(1...20), referenceRSSI: MeasuredPower(-60), reserved: 9)
        #expect(try BeaconFrame.decodeAll(advertisingData: frame.advertisingData()) == [.altBeacon(frame)])
    }

    @Test(arguments: [
        EddystoneFrame.uid(namespace: Array(0..<10), instance: Array(10..<16), txPowerAt0m: -20),
        EddystoneFrame.url(txPowerAt0m: -18, url: "https://www.example.com/beacons"),
        EddystoneFrame.url(txPowerAt0m: 0, url: "http://goo.gl/abc"),
        EddystoneFrame.tlm(EddystoneTelemetry(batteryMillivolts: 3000, temperatureCelsius: 21.5,
                                              advertisingCount: 123_456, uptimeDeciseconds: 99)),
        EddystoneFrame.tlm(EddystoneTelemetry(batteryMillivolts: 0, temperatureCelsius: nil,
                                              advertisingCount: 0, uptimeDeciseconds: 0)),
    ])
    func eddystoneRoundTrips(frame: EddystoneFrame) throws {
        let data = try #require(frame.advertisingData())
        #expect(try BeaconFrame.decodeAll(advertisingData: data) == [.eddystone(frame)])
    }

    @Test func eddystoneURLUsesExpansions() throws {
        let data = try #require(EddystoneFrame.url(txPowerAt0m: -18, url: "https://www.example.com/").serviceData)
        #expect(Array(data.suffix(9)) == [0x01] + Array("example".utf8) + [0x00])
    }

    @Test func negativeTemperatureIsSigned() throws {
        let frame = try EddystoneFrame(serviceData: [0xAA, 0xFE, 0x20, 0x00, 0x0B, 0xB8, 0xFF, 0x80, 0, 0, 0, 1, 0, 0, 0, 2])
        guard case .tlm(let telemetry) = frame else { Issue.record("expected TLM, got \(String(describing: frame))"); return }
        #expect(telemetry.temperatureCelsius == -0.5)
        #expect(telemetry.batteryMillivolts == 3000)
    }
}

@Suite("HCI advertising reports")
struct HCIReportTests {
    @Test func readsTwoReportsWithTheirRSSI() throws {
        let event = try Hex.bytes("043e4f02020300ecf800eef30c1e0201041aff4c0002158deefbb9f7384297804096668bb4428113880f4ec1bb0300ecf800eef30d1b1aff4c0002158deefbb9f7384297804096668bb4428113880f4fc1b0")
        let reports = try AdvertisingReport.decode(hciEvent: event)
        #expect(reports.map(\.rssi) == [-69, -80])
        #expect(reports.map(\.address.description) == ["0C:F3:EE:00:F8:EC", "0D:F3:EE:00:F8:EC"])
        #expect(try AdvertisingReport.decode(hciEvent: Array(event.dropFirst())) == reports)
        #expect(try AdvertisingReport.decode(leMetaParameters: event[3...]) == reports)
    }

    @Test func legacyEncodingRoundTripsAndRSSI127MeansNil() throws {
        let frame = IBeaconFrame(identity: BeaconIdentity(uuid: airLocate, major: 7, minor: 9))
        let reports = [
            AdvertisingReport(kind: .legacy(eventType: 3), addressType: 1,
                              address: BluetoothAddress("C0:FF:EE:00:00:01")!, rssi: nil, data: frame.advertisingData()),
            AdvertisingReport(kind: .legacy(eventType: 0), addressType: 0,
                              address: BluetoothAddress("C0:FF:EE:00:00:02")!, rssi: -90, data: []),
        ]
        let packet = AdvertisingReport.legacyEventPacket(reports)
        #expect(packet[0] == 0x3E && Int(packet[1]) == packet.count - 2 && packet[2] == 0x02 && packet[3] == 2)
        #expect(packet[3 + 1 + 9 + 30] == 127)
        #expect(try AdvertisingReport.decode(hciEvent: packet) == reports)
        #expect(try AdvertisingReport.decode(hciEvent: [0x04] + packet) == reports)
    }

    @Test func readsAnExtendedReport() throws {
        let data = IBeaconFrame(identity: BeaconIdentity(uuid: airLocate, major: 1, minor: 2)).advertisingData()
        var parameters: [UInt8] = [0x0D, 0x01, 0x10, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 0x01, 0x00, 0xFF, 0x7F, 0xC4,
                                   0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, UInt8(data.count)]
        parameters += data
        let event: [UInt8] = [0x04, 0x3E, UInt8(parameters.count)] + parameters
        let reports = try AdvertisingReport.decode(hciEvent: event)
        #expect(reports.count == 1)
        #expect(reports[0].kind == .extended(eventProperties: 0x0010))
        #expect(reports[0].rssi == -60)
        #expect(reports[0].address == BluetoothAddress(rawValue: 0x060504030201))
        #expect(reports[0].data == data)
        #expect(reports[0].legacyEventType == 3)
    }

    @Test func namesAnotherEvent() {
        #expect(throws: DecodeError(field: "HCI event code", offset: 1, expected: "0x3E (LE Meta event)",
                                    found: "0x0E (Command Complete)")) {
            try AdvertisingReport.decode(hciEvent: [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
        }
        #expect(throws: DecodeError.self) { try AdvertisingReport.decode(hciEvent: [0x3E, 0x02, 0x01, 0x00]) }
    }

    @Test func refusesAWrongParameterLength() {
        #expect(throws: DecodeError.self) { try AdvertisingReport.decode(hciEvent: [0x3E, 0x05, 0x02, 0x01]) }
    }
}

@Suite("JSON")
struct CodableTests {
    @Test func sightingUsesNullForMissingRSSI() throws {
        let sighting = Sighting(time: 1.5, receiver: "hci0", address: BluetoothAddress("AA:BB:CC:DD:EE:FF")!, rssi: nil,
                                frame: .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: airLocate, major: 1, minor: 2))))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(sighting), as: UTF8.self)
        #expect(json == #"{"address":"AA:BB:CC:DD:EE:FF","frame":{"format":"iBeacon","major":1,"measuredPower":-59,"minor":2,"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"},"receiver":"hci0","rssi":null,"time":1.5}"#)
        #expect(try JSONDecoder().decode(Sighting.self, from: Data(json.utf8)) == sighting)
    }

    @Test(arguments: [
        BeaconFrame.altBeacon(AltBeaconFrame(companyID: 0x0118, beaconID: Array(0..<20), referenceRSSI: MeasuredPower(-60), reserved: 0)),
        BeaconFrame.eddystone(.uid(namespace: Array(0..<10), instance: Array(0..<6), txPowerAt0m: -3)),
        BeaconFrame.eddystone(.url(txPowerAt0m: -3, url: "https://a.b")),
        BeaconFrame.eddystone(.tlm(EddystoneTelemetry(batteryMillivolts: 1, temperatureCelsius: nil, advertisingCount: 2, uptimeDeciseconds: 3))),
    ])
    func framesRoundTrip(frame: BeaconFrame) throws {
        #expect(try JSONDecoder().decode(BeaconFrame.self, from: JSONEncoder().encode(frame)) == frame)
    }

    @Test func reportRoundTrips() throws {
        let report = AdvertisingReport(kind: .extended(eventProperties: 0x13), addressType: 1,
                                       address: BluetoothAddress(rawValue: 42), rssi: -70, data: [1, 2, 3])
        #expect(try JSONDecoder().decode(AdvertisingReport.self, from: JSONEncoder().encode(report)) == report)
    }
}
