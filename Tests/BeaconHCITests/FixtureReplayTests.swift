import BeaconHCI
import BeaconKit
import Foundation
import Testing

/// Captures recorded from the emulator replay into exactly the sightings the live scan printed.
@Suite struct FixtureReplayTests {
    static func fixture(_ name: String) throws -> URL {
        try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil))
    }

    static func liveSightings() throws -> [Sighting] {
        let text = try String(contentsOf: try fixture("btvirt-scan.sightings.jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Sighting.self, from: Data($0.utf8)) }
    }

    @Test(arguments: ["btvirt-scan.btsnoop", "btvirt-scan.pcap"])
    func replayGivesTheLiveSightings(file: String) throws {
        let live = try Self.liveSightings()
        #expect(live.count == 2)
        let capture = try CaptureReader.read(contentsOf: try Self.fixture(file))
        let receiver = try #require(live.first?.receiver)
        #expect(CaptureReplay.allSightings(capture: capture, receiver: receiver) == live)
    }

    @Test func bothFormatsHoldTheSamePackets() throws {
        let snoop = try CaptureReader.read(contentsOf: try Self.fixture("btvirt-scan.btsnoop"))
        let pcap = try CaptureReader.read(contentsOf: try Self.fixture("btvirt-scan.pcap"))
        #expect(snoop.format == .btsnoop(datalink: 1002))
        #expect(pcap.format == .pcap(linkType: 201))
        #expect(snoop.packets == pcap.packets)
        // The scanner's conversation: Reset first, and the last command disables the scan.
        let commands = try snoop.packets.filter { $0.packet.type == .command }.map { try HCICommand(body: $0.packet.body) }
        #expect(commands.first?.opcode == .reset)
        #expect(commands.last == LECommand.setScanEnable(false))
        #expect(commands.contains(LECommand.setScanEnable(true, filterDuplicates: false)))
    }

    @Test func pacedReplayStreamsTheSameSightings() async throws {
        let url = try Self.fixture("btvirt-scan.pcap")
        var replayed: [Sighting] = []
        for try await sighting in try CaptureReplay.sightings(url: url, speed: 1000, receiver: "r") { replayed.append(sighting) }
        let live = try Self.liveSightings().map { sighting in
            var copy = sighting
            copy.receiver = "r"
            return copy
        }
        #expect(replayed == live)
    }
}
