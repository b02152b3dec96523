import BeaconHCI
import BeaconKit
import BeaconTesting
import Foundation
import Testing

/// The replay fixtures checked against a decoder that is not Proxima's: Wireshark's tshark reads
/// the same capture files, and the iBeacons it finds (address and Apple manufacturer data, the
/// payload read here by the iBeacon layout) must be exactly the sightings of the replay. On CI
/// (`CI=true`) a missing tshark is a failure, not a skip.
@Suite struct CaptureOracleTests {
    static let tshark = "/usr/bin/tshark"

    struct OracleBeacon: Hashable, CustomStringConvertible {
        var address: String
        var uuid: UUID
        var major: UInt16
        var minor: UInt16
        var measuredPower: Int8

        var description: String { "\(address) \(uuid) \(major) \(minor) \(measuredPower)" }
    }

    /// Apple manufacturer data `02 15 <uuid 16> <major 2> <minor 2> <power 1>`, as Apple's
    /// iBeacon specification lays it out, read from tshark's hex without BeaconKit.
    static func oracleBeacon(address: String, appleData hex: String) -> OracleBeacon? {
        let digits = Array(hex)
        guard digits.count == 46 else { return nil }
        let bytes = stride(from: 0, to: 46, by: 2).compactMap { UInt8(String(digits[$0..<$0 + 2]), radix: 16) }
        guard bytes.count == 23, bytes[0] == 0x02, bytes[1] == 0x15 else { return nil }
        let u = Array(bytes[2..<18])
        let uuid = UUID(uuid: (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]))
        return OracleBeacon(address: address.uppercased(), uuid: uuid, major: UInt16(bytes[18]) << 8 | UInt16(bytes[19]),
                            minor: UInt16(bytes[20]) << 8 | UInt16(bytes[21]), measuredPower: Int8(bitPattern: bytes[22]))
    }

    static func tsharkBeacons(_ url: URL) async throws -> [OracleBeacon] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tshark)
        process.arguments = ["-r", url.path, "-T", "fields", "-E", "separator=;",
                             "-e", "bthci_evt.bd_addr", "-e", "btcommon.eir_ad.entry.company_id", "-e", "btcommon.eir_ad.entry.data",
                             "-Y", "btcommon.eir_ad.entry.company_id == 0x004c"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let finished = try await FinishedProcess.run(process, output: output, errors: nil)
        let text = String(decoding: finished.standardOutput, as: UTF8.self)
        #expect(finished.status == 0, "tshark -r \(url.path) failed")
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3 else { return nil }
            return oracleBeacon(address: fields[0], appleData: fields[2])
        }
    }

    @Test(arguments: ["btvirt-scan.btsnoop", "btvirt-scan.pcap"])
    func replayAgreesWithTshark(file: String) async throws {
        let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
        guard FileManager.default.isExecutableFile(atPath: Self.tshark) else {
            #expect(!isCI, "tshark is missing; scripts/install-test-deps installs it")
            return
        }
        let url = try FixtureReplayTests.fixture(file)
        let oracle = try await Self.tsharkBeacons(url)
        #expect(oracle.count == 2, "tshark found \(oracle)")
        let replayed = CaptureReplay.allSightings(capture: try CaptureReader.read(contentsOf: url), receiver: "r").compactMap { sighting in
            sighting.frame.iBeacon.map {
                OracleBeacon(address: sighting.address.description, uuid: $0.identity.uuid, major: $0.identity.major,
                             minor: $0.identity.minor, measuredPower: $0.measuredPower.dBm)
            }
        }
        #expect(replayed == oracle)
    }
}
