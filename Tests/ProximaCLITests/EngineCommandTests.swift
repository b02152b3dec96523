import BeaconTesting
import Foundation
import Testing

/// `proxima regions`, `monitor`, `range` and `calibrate` end to end, over the replay of a real
/// capture recorded from BlueZ's emulator (Tests/BeaconHCITests/Fixtures/btvirt-scan.btsnoop:
/// two iBeacons, one packet each, no RSSI).
@Suite struct EngineCommandTests {
    static let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("BeaconHCITests/Fixtures/btvirt-scan.btsnoop").path
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    struct Outcome {
        var status: Int32
        var output: String
        var error: String
        var jsonLines: [[String: Any]] {
            output.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    /// Runs proxima with its own configuration directory.
    static func proxima(_ arguments: [String], configuration: URL) async throws -> Outcome {
        let executable = try #require(ProximaBinary.url, "the proxima executable was not built next to the tests")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PROXIMA_CONFIG_DIR"] = configuration.path
        process.environment = environment
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        let finished = try await FinishedProcess.run(process, output: output, errors: error)
        return Outcome(status: finished.status, output: String(decoding: finished.standardOutput, as: UTF8.self),
                       error: String(decoding: finished.standardError, as: UTF8.self))
    }

    static func configurationDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("proxima-engine-cli-\(UUID().uuidString)")
    }

    @Test func storedRegionsAreRestoredByMonitor() async throws {
        let directory = Self.configurationDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try await Self.proxima(["regions", "add", "\(Self.uuid):1", "--identifier", "store-1"], configuration: directory).status == 0)
        #expect(try await Self.proxima(["regions", "add", "\(Self.uuid):9", "--identifier", "store-9", "--notify-state-on-start"],
                                 configuration: directory).status == 0)
        let listed = try await Self.proxima(["regions", "list"], configuration: directory)
        #expect(listed.output.contains("store-1") && listed.output.contains("store-9"))

        // A new process restores both regions from the file.
        let monitor = try await Self.proxima(["monitor", "--replay", Self.capture, "--speed", "0", "--json"], configuration: directory)
        #expect(monitor.status == 0, "\(monitor.error)")
        let events = monitor.jsonLines.map { "\($0["event"] ?? "")/\(($0["region"] as? [String: Any])?["identifier"] ?? "")" }
        #expect(events == ["state/store-9", "enter/store-1", "exit/store-1"])

        #expect(try await Self.proxima(["regions", "remove", "store-1"], configuration: directory).status == 0)
        let missing = try await Self.proxima(["regions", "remove", "store-1"], configuration: directory)
        #expect(missing.status != 0 && missing.error.contains("store-1"))
    }

    @Test func monitorWithoutAnyRegionRefusesClearly() async throws {
        let directory = Self.configurationDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try await Self.proxima(["monitor", "--replay", Self.capture], configuration: directory)
        #expect(outcome.status != 0)
        #expect(outcome.error.contains("no region"))
        let bad = try await Self.proxima(["monitor", "--replay", Self.capture, "--region", "\(Self.uuid)::4"], configuration: directory)
        #expect(bad.status != 0 && bad.error.contains("major"))
    }

    @Test func rangeReplaysCoreLocationFields() async throws {
        let directory = Self.configurationDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try await Self.proxima(["range", "--replay", Self.capture, "--speed", "0", "--region", Self.uuid, "--json"],
                                       configuration: directory)
        #expect(outcome.status == 0, "\(outcome.error)")
        let cycles = outcome.jsonLines
        let first = try #require((cycles.first?["beacons"] as? [[String: Any]])?.first)
        #expect(first["major"] as? Int == 1 && first["minor"] as? Int == 2)
        #expect(first["packetCount"] as? Int == 1)
        // The emulator reports no RSSI (127): no mean, no distance.
        #expect(first["rssi"] as? Int == 0 && first["accuracy"] as? Double == -1 && first["proximity"] as? String == "unknown")
        // Listed, unknown, for the 5 s tracking age, then gone; one cycle a second.
        let counts = cycles.map { ($0["beacons"] as? [Any])?.count ?? -1 }
        #expect(counts.prefix(6) == [1, 1, 1, 1, 1, 0])
        let times = cycles.compactMap { $0["time"] as? Double }
        #expect(zip(times, times.dropFirst()).prefix(5).allSatisfy { abs($1 - $0 - 1) < 1e-6 })
    }

    @Test func calibrateRefusesWithoutEnoughSamples() async throws {
        let directory = Self.configurationDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try await Self.proxima(["calibrate", "--replay", Self.capture, "--speed", "0"], configuration: directory)
        #expect(outcome.status != 0)
        #expect(outcome.error.contains("calibration refused"))
        let short = try await Self.proxima(["calibrate", "--replay", Self.capture, "--duration", "5"], configuration: directory)
        #expect(short.status != 0 && short.error.contains("at least 10"))
    }
}
