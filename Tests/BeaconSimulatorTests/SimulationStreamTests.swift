import BeaconKit
import BeaconSimulator
import Foundation
import Testing

@Suite struct SimulationStreamTests {
    @Test func sameSeedSameSightingsAndAnotherSeedDiffers() throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        var first = Simulation(scenario: scenario)
        var second = Simulation(scenario: scenario)
        let a = first.run(), b = second.run()
        #expect(a.count > 100)
        #expect(a == b)
        var reseeded = scenario
        reseeded.seed = 8
        var third = Simulation(scenario: reseeded)
        #expect(third.run().map(\.sighting.rssi) != a.map(\.sighting.rssi))
    }

    @Test func sightingsAreInTimeOrderWithConsistentTruth() throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        var simulation = Simulation(scenario: scenario)
        let all = simulation.run()
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.sighting.time <= $1.sighting.time })
        #expect(all.allSatisfy { $0.sighting.time < scenario.duration })
        for item in all {
            let beacon = try #require(scenario.beacons.first { $0.name == item.truth.beacon })
            #expect(item.sighting.address == beacon.address)
            #expect(abs(beacon.position.distance(to: item.truth.receiverPosition) - item.truth.distance) < 1e-9)
            let rssi = try #require(item.sighting.rssi)
            #expect(Double(rssi) >= scenario.channel.sensitivity)
        }
        // The gateway 3 m from "left" is inside both regions for the whole run.
        let gateway = all.filter { $0.sighting.receiver == "gateway" }
        #expect(!gateway.isEmpty)
        #expect(gateway.allSatisfy { $0.truth.regions == ["store", "left only"] })
        // The walker crosses the hall, so its truth leaves "left only" at some point.
        let walker = all.filter { $0.sighting.receiver == "walker" }
        #expect(walker.contains { $0.truth.regions.contains("left only") })
        #expect(walker.contains { !$0.truth.regions.contains("left only") })
    }

    @Test func telemetryBeaconInterleavesTLMFrames() throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        var simulation = Simulation(scenario: scenario)
        let frames = simulation.run().filter { $0.truth.beacon == "right" }.map(\.sighting.frame)
        let telemetry = frames.compactMap { frame -> EddystoneTelemetry? in
            if case .eddystone(.tlm(let tlm)) = frame { return tlm }
            return nil
        }
        #expect(!telemetry.isEmpty)
        #expect(telemetry.allSatisfy { $0.batteryMillivolts == 2900 })
        #expect(frames.contains { $0.iBeacon != nil })
    }

    @Test func advertisingTimingFollowsIntervalPlusAdvDelay() throws {
        var scenario = try Scenario.decode(Data(minimalScenario.utf8))
        scenario.channel.shadowingSigma = 0
        scenario.channel.fading = .none
        scenario.receivers = [SimulatedReceiver(name: "close", placement: .fixed(Position3D(x: 3, y: 5)))]
        scenario.beacons = [scenario.beacons[0]]
        var simulation = Simulation(scenario: scenario)
        let times = simulation.run().map(\.sighting.time)
        // A receiver cycling channels every scan interval hears each event on exactly one channel.
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 >= 0.1 && $0 <= 0.110 + 1e-9 })
        let meanDelay = gaps.reduce(0, +) / Double(gaps.count) - 0.1
        #expect(abs(meanDelay - 0.005) < 0.001)
    }

    @Test func streamDeliversTheSameAsTheIterator() async throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        var simulation = Simulation(scenario: scenario)
        let direct = simulation.run()
        var streamed: [SimulatedSighting] = []
        for try await item in Simulation.stream(scenario) { streamed.append(item) }
        #expect(streamed == direct)
        var shortened: [Sighting] = []
        for try await sighting in Simulation.sightings(scenario, duration: 5) { shortened.append(sighting) }
        #expect(shortened == direct.prefix { $0.sighting.time < 5 }.map(\.sighting))
    }
}
