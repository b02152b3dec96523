import Foundation
import Testing

/// What every command does with its standard output: a failed write is an error with a
/// message and a non-zero exit (not a crash, not exit 0 with the output lost), JSON is written
/// the same way by every command, and times are ISO 8601 in UTC.
@Suite struct StandardOutputTests {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let capture = testsFolder.appendingPathComponent("BeaconHCITests/Fixtures/btvirt-scan.btsnoop").path
    static let scenario = testsFolder.deletingLastPathComponent().appendingPathComponent("examples/museum.json").path
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let plot = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-full-\(UUID().uuidString).svg").path

    static let commands: [[String]] = [
        ["decode", "0201061AFF4C000215E2C56DB5DFFB48D2B060D0F5A71096E000010002C5"],
        ["decode", "--json", "0201061AFF4C000215E2C56DB5DFFB48D2B060D0F5A71096E000010002C5"],
        ["encode", "--uuid", uuid, "--major", "1", "--minor", "2"],
        ["encode", "--uuid", uuid, "--major", "1", "--minor", "2", "--json"],
        ["encode", "--uuid", uuid, "--major", "1", "--minor", "2", "--hcitool"],
        ["uuid"],
        ["scan", "--replay", capture, "--speed", "0"],
        ["scan", "--replay", capture, "--speed", "0", "--json"],
        ["simulate", scenario, "--duration", "5"],
        ["simulate", scenario, "--duration", "5", "--json"],
        ["evaluate", scenario, "--duration", "20", "--plot", plot],
        ["monitor", "--replay", capture, "--speed", "0", "--no-stored-regions", "--region", uuid],
        ["monitor", "--replay", capture, "--speed", "0", "--no-stored-regions", "--region", uuid, "--json"],
        ["range", "--replay", capture, "--speed", "0", "--no-stored-regions", "--region", uuid],
        ["range", "--replay", capture, "--speed", "0", "--no-stored-regions", "--region", uuid, "--json"],
        ["calibrate", "--simulate", scenario, "--speed", "0"],
        ["calibrate", "--simulate", scenario, "--speed", "0", "--json"],
        ["regions", "add", uuid],
        ["regions", "list"],
        ["transmitters", "list"],
    ]

    @Test(arguments: commands)
    func aFullStandardOutputIsAnErrorAndANonZeroExit(arguments: [String]) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-full-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(atPath: Self.plot)
        }
        let (outcome, signalled) = try await ProximaBinary.run(arguments, standardOutputPath: "/dev/full",
                                                         environment: ["PROXIMA_CONFIG_DIR": directory.path])
        #expect(!signalled, "crashed: \(outcome.standardError)")
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("cannot write to standard output: No space left on device"),
                "\(outcome.standardError)")
    }

    /// One Eddystone-URL advertisement with slashes in its URL, as a btsnoop capture of one
    /// HCI LE Advertising Report, built byte by byte here rather than by the code under test.
    static let eddystoneData: [UInt8] = [
        0x02, 0x01, 0x06,                                   // flags: LE General, no BR/EDR
        0x03, 0x03, 0xAA, 0xFE,                             // complete 16-bit service UUIDs: FEAA
        0x11, 0x16, 0xAA, 0xFE,                             // service data for FEAA, 17 bytes
        0x10, 0xEB, 0x03,                                   // URL frame, -21 dBm at 0 m, "https://"
        0x65, 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65, 0x00,     // "example", ".com/"
        0x61, 0x2F, 0x62,                                   // "a/b"
    ]

    static func eddystoneCapture() throws -> URL {
        var report: [UInt8] = [0x02, 0x01, 0x03, 0x00]      // LE Advertising Report, 1 report, ADV_NONCONN_IND, public
        report += [0x42, 0x00, 0x00, 0x01, 0xAA, 0x00]      // address 00:AA:01:00:00:42, little-endian
        report += [UInt8(eddystoneData.count)] + eddystoneData + [0xC4]   // RSSI -60 dBm
        let packet: [UInt8] = [0x04, 0x3E, UInt8(report.count)] + report  // H4 event, LE Meta
        var file = Array("btsnoop".utf8) + [0] + bigEndian(UInt32(1), 4) + bigEndian(UInt32(1002), 4)
        let microseconds = UInt64(0x00DC_DDB3_0F2F_8000) + 1_763_000_000 * 1_000_000  // btsnoop epoch is year 0
        file += bigEndian(UInt32(packet.count), 4) + bigEndian(UInt32(packet.count), 4)
        file += bigEndian(UInt32(3), 4) + bigEndian(UInt32(0), 4) + bigEndian(microseconds, 8)   // received event, no drops
        file += packet
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-eddystone-\(UUID().uuidString).btsnoop")
        try Data(file).write(to: url)
        return url
    }

    static func bigEndian(_ value: some FixedWidthInteger, _ bytes: Int) -> [UInt8] {
        (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    @Test func scanAndDecodeWriteAnEddystoneURLAlike() async throws {
        let capture = try Self.eddystoneCapture()
        defer { try? FileManager.default.removeItem(at: capture) }
        let scanned = try await ProximaBinary.run(["scan", "--replay", capture.path, "--speed", "0", "--json"])
        let decoded = try await ProximaBinary.run(["decode", "--all-formats", "--json", Self.eddystoneData.map { String(format: "%02X", $0) }.joined()])
        #expect(scanned.status == 0, "\(scanned.standardError)")
        #expect(decoded.status == 0, "\(decoded.standardError)")
        for output in [scanned.standardOutput, decoded.standardOutput] {
            #expect(output.split(separator: "\n").count == 1)
            #expect(output.contains("\"https://example.com/a/b\""), "\(output)")
            #expect(!output.contains("\\/"), "\(output)")
        }
    }

    /// 2025-11-13T02:13:20.000Z is 1,763,000,000 s after 1970.
    @Test func scanAndMonitorShowTimesInISO8601UTC() async throws {
        let capture = try Self.eddystoneCapture()
        defer { try? FileManager.default.removeItem(at: capture) }
        let scanned = try await ProximaBinary.run(["scan", "--replay", capture.path, "--speed", "0"])
        #expect(scanned.standardOutput.hasPrefix("2025-11-13T02:13:20.000Z  00:AA:01:00:00:42  Eddystone-URL"),
                "\(scanned.standardOutput)")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-time-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let monitor = try await EngineCommandTests.proxima(["monitor", "--replay", Self.capture, "--speed", "0", "--no-stored-regions",
                                                      "--region", Self.uuid], configuration: directory)
        let lines = monitor.output.split(separator: "\n")
        #expect(lines.count == 2, "\(monitor.output)")
        for line in lines {
            #expect(line.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  (enter|exit) .*/) != nil, "\(line)")
        }
    }
}
