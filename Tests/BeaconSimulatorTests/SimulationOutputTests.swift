import BeaconHCI
import BeaconKit
import BeaconSimulator
import Foundation
import Testing

@Suite struct SimulationOutputTests {
    @Test func jsonLinesRoundTrip() throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        var simulation = Simulation(scenario: scenario)
        let items = Array(simulation.run().prefix(200))
        for item in items {
            let line = try item.jsonLine()
            #expect(!line.contains("\n"))
            let back = try JSONDecoder().decode(SimulatedSighting.self, from: Data(line.utf8))
            #expect(back.sighting == item.sighting)
            #expect(back.truth.regions == item.truth.regions)
            #expect(abs(back.truth.distance - item.truth.distance) < 0.001)
        }
    }

    /// A capture written from the simulation replays into the same sightings (times shifted to
    /// the capture epoch and whole microseconds), TLM frames included.
    @Test(arguments: [CaptureFileFormat.btsnoop, .pcap])
    func capturesReplayIntoTheSameSightings(format: CaptureFileFormat) throws {
        let scenario = try Scenario.decode(Data(minimalScenario.utf8))
        var simulation = Simulation(scenario: scenario)
        let items = simulation.run().filter { $0.sighting.receiver == "walker" }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(UUID().uuidString).capture")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try format.makeWriter(url: url)
        for item in items {
            let report = try #require(item.advertisingReport)
            let microseconds = Int64(((SimulatedSighting.captureEpoch + item.sighting.time) * 1_000_000).rounded())
            try writer.record(TimestampedPacket(microseconds: microseconds, direction: .received,
                                                packet: HCIPacket(type: .event, body: AdvertisingReport.legacyEventPacket([report]))))
        }
        try writer.close()
        let replayed = CaptureReplay.allSightings(capture: try CaptureReader.read(contentsOf: url), receiver: "walker")
        #expect(replayed.count == items.count)
        for (original, back) in zip(items, replayed) {
            #expect(back.frame == original.sighting.frame)
            #expect(back.rssi == original.sighting.rssi)
            #expect(back.address == original.sighting.address)
            #expect(abs(back.time - SimulatedSighting.captureEpoch - original.sighting.time) < 2e-6)
        }
        #expect(replayed.contains { if case .eddystone(.tlm) = $0.frame { true } else { false } })
    }
}
