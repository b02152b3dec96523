import Foundation
import Testing
@testable import BeaconKit

@Suite struct BeaconRegionTests {
    @Test func threeKindsMatchTheirBeacons() throws {
        let any = try BeaconRegion(identifier: "u", uuid: Fixture.uuid)
        let site = try BeaconRegion(identifier: "m", uuid: Fixture.uuid, major: 7)
        let one = try BeaconRegion(identifier: "b", uuid: Fixture.uuid, major: 7, minor: 3)
        let beacon = Fixture.identity(7, 3)
        let sibling = Fixture.identity(7, 4)
        let elsewhere = Fixture.identity(8, 3)
        let foreign = Fixture.identity(7, 3, uuid: Fixture.otherUUID)
        #expect(any.contains(beacon) && any.contains(elsewhere) && !any.contains(foreign))
        #expect(site.contains(beacon) && site.contains(sibling) && !site.contains(elsewhere))
        #expect(one.contains(beacon) && !one.contains(sibling) && !one.contains(foreign))
    }

    @Test func minorWithoutMajorIsRefused() {
        #expect(throws: RegionError.self) { try BeaconRegion(identifier: "x", uuid: Fixture.uuid, minor: 3) }
        do {
            _ = try BeaconRegion(identifier: "x", uuid: Fixture.uuid, minor: 3)
        } catch {
            #expect(error.description.contains("needs a major"))
        }
    }

    @Test(arguments: [
        ("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", nil, nil),
        ("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:7", 7, nil),
        ("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:7:65535", 7, 65535),
    ] as [(String, Int?, Int?)])
    func parsesConstraintText(text: String, major: Int?, minor: Int?) throws {
        let region = try BeaconRegion(parsing: text)
        #expect(region.uuid == Fixture.uuid)
        #expect(region.major.map(Int.init) == major)
        #expect(region.minor.map(Int.init) == minor)
        #expect(region.constraintText == text)
    }

    @Test(arguments: ["nope", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:70000", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:3",
                      "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0::4"])
    func refusesBadConstraintText(text: String) {
        #expect(throws: RegionError.self) { try BeaconRegion(parsing: text) }
    }

    @Test func codableRoundTripAndRefusesMinorWithoutMajor() throws {
        var region = try BeaconRegion(identifier: "lobby", uuid: Fixture.uuid, major: 1, minor: 2)
        region.notifyEntryStateOnStart = true
        let data = try JSONEncoder().encode(region)
        #expect(try JSONDecoder().decode(BeaconRegion.self, from: data) == region)
        let bad = Data(#"{"identifier":"x","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","minor":3}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(BeaconRegion.self, from: bad) }
    }

    @Test func sameIdentifierReplacesTheRegion() throws {
        var engine = BeaconEngine()
        try engine.startMonitoring(Fixture.region("a", major: 1))
        try engine.startMonitoring(Fixture.region("a", major: 2))
        #expect(engine.monitoredRegions.count == 1)
        #expect(engine.monitoredRegions.first?.major == 2)
        // The replacement applies: a major-1 beacon no longer enters "a".
        #expect(engine.receive(Fixture.sighting(Fixture.identity(1, 1), time: 1)).isEmpty)
        #expect(engine.receive(Fixture.sighting(Fixture.identity(2, 1), time: 2)).contains { $0.isEnter })
    }

    @Test func noRegionLimitByDefault() throws {
        var engine = BeaconEngine()
        for index in 0..<100 { try engine.startMonitoring(Fixture.region("r\(index)", major: UInt16(index))) }
        #expect(engine.monitoredRegions.count == 100)
    }

    @Test func coreLocationLimitFailsClearlyAndAllowsReplacement() throws {
        var engine = BeaconEngine(configuration: .init(regionLimit: EngineConfiguration.coreLocationRegionLimit))
        for index in 0..<20 { try engine.startMonitoring(Fixture.region("r\(index)", major: UInt16(index))) }
        #expect(throws: MonitoringError.regionLimitExceeded(limit: 20, identifier: "r20")) {
            try engine.startMonitoring(Fixture.region("r20"))
        }
        #expect(MonitoringError.regionLimitExceeded(limit: 20, identifier: "r20").description.contains("limit of 20"))
        try engine.startMonitoring(Fixture.region("r3", major: 99))
        #expect(engine.monitoredRegions.count == 20)
        engine.stopMonitoring(identifier: "r0")
        try engine.startMonitoring(Fixture.region("r20"))
        #expect(engine.monitoredRegions.count == 20)
    }
}
