import BeaconKit
import BeaconSimulator
import Foundation
import Testing

/// A scenario beacon bound to a transmitter file (`advertisers`): what `proxima help-request
/// --simulated-transmitter` writes decides whether and as what the simulated phone advertises.
@Suite struct ScenarioAdvertiserTests {
    static func scenarioDirectory(transmitter: String?) throws -> URL {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("proxima-advertisers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: examplesDirectory.appendingPathComponent("help-desk.json"), to: directory.appendingPathComponent("help-desk.json"))
        if let transmitter { try transmitter.write(to: directory.appendingPathComponent("visitor-phone.json"), atomically: true, encoding: .utf8) }
        return directory
    }

    @Test func aTransmitterFileGivesThePhoneItsIdentity() throws {
        let directory = try Self.scenarioDirectory(transmitter: nil)
        defer { try? FileManager.default.removeItem(at: directory) }
        let frame = IBeaconFrame(identity: BeaconIdentity(uuid: UUID(uuidString: "6A1B5D9C-3F47-4E0A-9C21-7D8E4B2F1A05")!, major: 999, minor: 4242),
                                 measuredPower: MeasuredPower(-62))
        try SimulatedTransmitterFile(frame: frame).write(to: directory.appendingPathComponent("visitor-phone.json"))
        var scenario = try Scenario.load(contentsOf: directory.appendingPathComponent("help-desk.json"))
        let phone = try #require(scenario.beacons.first { $0.name == "visitor phone" })
        #expect(phone.identity == frame.identity && phone.measuredPower == MeasuredPower(-62))
        #expect(scenario.regions.contains { $0.name == "visitor phone" && $0.matches(frame.identity) })
        scenario.duration = 20
        var simulation = Simulation(scenario: scenario)
        let heard = simulation.run().filter { $0.sighting.frame.iBeacon?.identity == frame.identity }
        #expect(Set(heard.map(\.sighting.receiver)).isSuperset(of: ["desk gateway", "helper"]))
    }

    @Test func withoutTheFileThePhoneIsSilent() throws {
        let directory = try Self.scenarioDirectory(transmitter: nil)
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenario = try Scenario.load(contentsOf: directory.appendingPathComponent("help-desk.json"))
        #expect(!scenario.beacons.contains { $0.name == "visitor phone" })
        #expect(!scenario.regions.contains { $0.name == "visitor phone" })
        #expect(scenario.beacons.count == 2)
    }

    @Test(arguments: [
        (#"{"uuid":"nope","major":999,"minor":1,"measuredPower":-59}"#, "advertisers[0].file"),
        (#"{"uuid":"6A1B5D9C-3F47-4E0A-9C21-7D8E4B2F1A05","major":999,"minor":1,"measuredPower":5}"#, "advertisers[0].file"),
        ("not json", "advertisers[0].file"),
    ])
    func aBadTransmitterFileIsRefusedNamingTheEntry(content: String, path: String) throws {
        let directory = try Self.scenarioDirectory(transmitter: content)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect { try Scenario.load(contentsOf: directory.appendingPathComponent("help-desk.json")) } throws: { error in
            (error as? ScenarioError)?.path == path
        }
    }

    @Test(arguments: [
        (#"[{"beacon":"nobody","file":"x.json"}]"#, "advertisers[0].beacon"),
        (#"[{"beacon":"Help desk","file":"a.json"},{"beacon":"Help desk","file":"b.json"}]"#, "advertisers[1].beacon"),
        (#"[{"beacon":"Help desk","file":""}]"#, "advertisers[0].file"),
        (#"[{"beacon":"Help desk","file":"a.json","extra":1}]"#, "advertisers[0].extra"),
    ])
    func badAdvertisersAreRefusedNamingTheirPath(advertisers: String, path: String) throws {
        let document = #"{"venue":{"width":10,"height":10},"uuid":"6A1B5D9C-3F47-4E0A-9C21-7D8E4B2F1A05","#
            + #""beacons":[{"name":"Help desk","major":1,"minor":1,"position":{"x":1,"y":1}}],"receivers":[{"name":"r","position":{"x":2,"y":2}}],"#
            + #""advertisers":\#(advertisers)}"#
        #expect { try Scenario.decode(Data(document.utf8)) } throws: { error in
            (error as? ScenarioError)?.path == path
        }
    }
}
