import BeaconKit
import BeaconTesting
import Foundation
import Testing

/// `proxima transmitters` keeps its list in the configuration directory; each test gets its own.
@Suite struct TransmittersCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-transmitters-\(UUID().uuidString)")

    func run(_ arguments: [String]) async throws -> (status: Int32?, output: String, errors: String) {
        let child = try ChildProcess.proxima(arguments, environment: ["PROXIMA_CONFIG_DIR": directory.path])
        let status = try await child.waitForExit()
        return (status, child.standardOutput, child.standardError)
    }

    @Test func addListShowSwitchAndRemove() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        #expect(try await run(["transmitters", "add", "--name", "desk", "--uuid", uuid, "--major", "1", "--minor", "7",
                               "--power", "-62"]).status == 0)
        let generated = try await run(["transmitters", "add", "--name", "lobby", "--generate-uuid", "--major", "2", "--minor", "3"])
        #expect(generated.status == 0)

        let list = try await run(["transmitters", "list"])
        let lines = list.output.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("desk  on   \(uuid)  major 1  minor 7  power -62 dBm") == true)
        #expect(lines.last?.contains("power -59 dBm") == true, "power defaults to -59")

        let show = try await run(["transmitters", "show", "desk"])
        #expect(show.output.contains("advertising: 02 01 1a 1a ff 4c 00 02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 00 07 c2"))

        let duplicate = try await run(["transmitters", "add", "--name", "desk", "--uuid", uuid, "--major", "1", "--minor", "1"])
        #expect(duplicate.status != 0)
        #expect(duplicate.errors.contains("--replace"))

        #expect(try await run(["transmitters", "off", "desk"]).status == 0)
        let refused = try await run(["advertise", "--config", "desk", "--h4", "/nonexistent"])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("switched off"))

        #expect(try await run(["transmitters", "remove", "desk"]).status == 0)
        let missing = try await run(["transmitters", "show", "desk"])
        #expect(missing.status != 0)
        #expect(missing.errors.contains("no transmitter named 'desk'"))
        let stored = try Data(contentsOf: directory.appendingPathComponent("transmitters.json"))
        #expect(String(decoding: stored, as: UTF8.self).contains("lobby"))
    }

    @Test func badInputIsRefusedNamingTheField() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await run(["transmitters", "add", "--name", "x", "--uuid", "nope", "--major", "1", "--minor", "1"])
        #expect(result.status != 0)
        #expect(result.errors.contains("invalid uuid 'nope'"))
        let range = try await run(["transmitters", "add", "--name", "x", "--generate-uuid", "--major", "70000", "--minor", "1"])
        #expect(range.errors.contains("0…65535"))
    }
}
