@testable import BeaconGateway
import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

@Suite("Numbering, CSV, monitor")
struct UnitTests {
    @Test func numberingPlanGroupsAndLimits() throws {
        let plan = NumberingPlan()
        #expect(try plan.minors(ofCategory: 1) == 1001...1999)
        #expect(try plan.minors(ofCategory: 65) == 65001...65535)
        #expect(throws: RegistryError.self) { try plan.minors(ofCategory: 66) }
        #expect(try plan.nextMinor(category: 2, used: [2001, 2002, 2004], siteName: "s") == 2003)
        #expect(plan.category(ofMinor: 2003) == 2)
        #expect(try plan.nextMajor(used: [1, 2, 3], uuid: "u") == 4)
        let allMajors = Set((1...65535).map { UInt16($0) })
        do {
            _ = try plan.nextMajor(used: allMajors, uuid: "E2C56DB5")
            Issue.record("65,535 used majors must be refused")
        } catch {
            #expect(error.kind == .exhausted)
            #expect(error.message.contains("all 65,535 majors of proximity UUID E2C56DB5 are taken"))
        }
    }

    @Test func csvHandlesQuotesCommasNewlinesAndNamesBadLines() throws {
        let rows = try CSV.parse("a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n\n1,2,3")
        #expect(rows == [["a", "b", "c"], ["x, y", "say \"hi\"", "two\nlines"], ["1", "2", "3"]])
        #expect(try CSV.parse(CSV.render(rows)) == rows)
        #expect(throws: ServerInputError(field: "line 2", reason: "a quoted field is never closed")) { try CSV.parse("a\n\"open") }
        #expect(throws: ServerInputError.self) { try CSV.parse("a,b\"c\"") }
    }

    @Test func sitePlanCSVNamesLineAndColumn() throws {
        let positions = try PlannedPosition.parseCSV("category,label,x,y,measured_power\n1,Door,1.5,2,-61\n2,Till,3,4,\n")
        #expect(positions == [PlannedPosition(category: 1, label: "Door", x: 1.5, y: 2, measuredPower: -61),
                              PlannedPosition(category: 2, label: "Till", x: 3, y: 4)])
        #expect(throws: ServerInputError(field: "line 3, column y", reason: "expected a number, found 'far'")) {
            try PlannedPosition.parseCSV("category,label,x,y\n1,Door,1,2\n2,Till,3,far\n")
        }
    }

    @Test func advertisingDataIsTheAppleLayout() {
        let configuration = TransmitterConfiguration(beaconID: 1, uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
                                                     major: 1, minor: 1001, measuredPower: -59, txPower: 0, label: "x", x: 0, y: 0)
        let bytes = configuration.advertisingData
        #expect(bytes.count == 30)
        #expect(Array(bytes[0..<9]) == [0x02, 0x01, 0x1A, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15])
        #expect(Array(bytes[9..<13]) == [0xE2, 0xC5, 0x6D, 0xB5])
        #expect(Array(bytes[25..<30]) == [0x00, 0x01, 0x03, 0xE9, 0xC5])
    }

    @Test func monitorEntersExitsAndSurvivesACheckpoint() throws {
        let identity = BeaconIdentity(uuid: UUID(), major: 1, minor: 2)
        func sighting(_ time: Double) -> Sighting {
            Sighting(time: time, receiver: "g", address: BluetoothAddress(rawValue: 1), rssi: -59,
                     frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))))
        }
        var monitor = GatewayMonitor(settings: GatewaySettings(exitRule: .fixedDelay(seconds: 5)))
        let first = monitor.apply([sighting(1), sighting(2)])
        #expect(first.changes.map(\.transition) == [.enter])
        #expect(first.readings.first?.proximity == "near")
        // The engine's default distance model answers for a beacon read at its measured power.
        let expected = try #require(DistanceModel.default.distance(rssi: -59, measuredPower: MeasuredPower(-59)))
        #expect(abs((first.readings.first?.distance ?? 0) - expected) < 1e-9)
        // Through the header and the beacon rows, as the database keeps them.
        var engine = monitor.engine
        let rows = engine.takeChanges().changed
        #expect(rows.map(\.identity) == [identity])
        let header = try JSONDecoder().decode(GatewayCheckpointHeader.self, from: JSONEncoder().encode(monitor.header))
        var resumed = try GatewayMonitor(settings: monitor.settings, header: header, beacons: rows)
        #expect(resumed.engine.checkpoint == monitor.engine.checkpoint)
        #expect(resumed.apply([sighting(6)]).changes.isEmpty)
        let gap = resumed.apply([sighting(20)])
        #expect(gap.changes.map(\.transition) == [.exit, .enter])
        #expect(gap.changes.first?.time == 11)
    }
}
