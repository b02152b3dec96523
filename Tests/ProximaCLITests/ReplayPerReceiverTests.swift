import Foundation
import Testing

/// `--replay NAME=FILE`, repeated: one capture per receiver, replayed together in time order.
@Suite struct ReplayPerReceiverTests {
    @Test func capturesOfTwoReceiversMergeInTimeOrderUnderTheirNames() async throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let office = SimulatorCommandTests.examples.appendingPathComponent("office.json").path
        let kitchen = directory.appendingPathComponent("k.btsnoop").path, lab = directory.appendingPathComponent("l.pcap").path
        #expect(try await ProximaBinary.run(["simulate", office, "--duration", "3", "--receiver", "gateway kitchen", "--btsnoop", kitchen]).status == 0)
        #expect(try await ProximaBinary.run(["simulate", office, "--duration", "3", "--receiver", "gateway lab", "--pcap", lab]).status == 0)
        let merged = try await ProximaBinary.run(["scan", "--replay", "kitchen=\(kitchen)", "--replay", "lab=\(lab)", "--speed", "0", "--json"])
        #expect(merged.status == 0, "\(merged.standardError)")
        let sightings = try merged.standardOutput.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let receivers = sightings.compactMap { $0["receiver"] as? String }
        #expect(Set(receivers) == ["kitchen", "lab"])
        let times = sightings.compactMap { $0["time"] as? Double }
        #expect(times.count == sightings.count && zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })

        let twice = try await ProximaBinary.run(["scan", "--replay", "a=\(kitchen)", "--replay", "a=\(lab)", "--speed", "0"])
        #expect(twice.status != 0 && twice.standardError.contains("receiver \"a\" given twice"))
    }
}
