import BeaconKit
import BeaconSimulator
import Foundation
import Testing

/// The scenarios shipped in examples/, found from this source file's place in the repository.
let examplesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("examples")

@Suite struct ExampleScenarioTests {
    @Test(arguments: ["retail.json", "nerdery.json", "museum.json", "office.json"])
    func loadsAndSimulates(file: String) throws {
        var scenario = try Scenario.load(contentsOf: examplesDirectory.appendingPathComponent(file))
        scenario.duration = 30
        var simulation = Simulation(scenario: scenario)
        let sightings = simulation.run()
        #expect(!sightings.isEmpty)
        // Every receiver that starts inside a region hears something there within 30 s.
        let heard = Set(sightings.map(\.sighting.receiver))
        for receiver in scenario.receivers where !scenario.trueRegions(of: receiver, at: 1).isEmpty {
            #expect(heard.contains(receiver.name), "\(receiver.name) heard nothing")
        }
    }

    @Test func retailFollowsTheGuidesNumberingPlan() throws {
        let scenario = try Scenario.load(contentsOf: examplesDirectory.appendingPathComponent("retail.json"))
        #expect(Set(scenario.beacons.map(\.identity.uuid)).count == 1)
        #expect(Set(scenario.beacons.map(\.identity.major)) == [1, 2, 3])
        #expect(Set(scenario.beacons.map(\.identity.minor)) == [10, 20, 30])
        // A shopper's loop takes them into their store and out again.
        let shopper = try #require(scenario.receivers.first { $0.name == "Paris shopper 1" })
        let storeIndex = try #require(scenario.regions.firstIndex { $0.name == "Paris store" })
        let inside = stride(from: 0.0, to: 1200, by: 5).map { scenario.trueRegions(of: shopper, at: $0).contains(storeIndex) }
        #expect(inside.contains(true) && inside.contains(false))
    }

    @Test func nerderyHasOfficesGroupsOfAThousandAndAHelpBeacon() throws {
        let scenario = try Scenario.load(contentsOf: examplesDirectory.appendingPathComponent("nerdery.json"))
        #expect(scenario.beacons.contains { $0.identity.major == 999 })
        let officeMinors = scenario.beacons.filter { $0.identity.major != 999 }.map { Int($0.identity.minor) / 1000 }
        #expect(Set(officeMinors) == [1, 2, 3])
    }

    @Test func museumPaintingIsOneIdentityFromSeveralTransmitters() throws {
        let scenario = try Scenario.load(contentsOf: examplesDirectory.appendingPathComponent("museum.json"))
        let painting = scenario.beacons.filter { $0.identity.minor == 1 }
        #expect(painting.count == 3)
        #expect(Set(painting.map(\.address)).count == 3)
        #expect(Set(painting.map(\.identity)).count == 1)
    }
}
