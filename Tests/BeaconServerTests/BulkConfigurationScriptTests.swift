import BeaconKit
@testable import BeaconServer
import BeaconTesting
import Foundation
import Testing

/// `format=hcitool` is a shell script an installer runs; labels are typed by whoever edits the
/// site plan, so no label may add a command to it.
@Suite("Bulk configuration as a shell script")
struct BulkConfigurationScriptTests {
    static func configuration(label: String, minor: UInt16) -> TransmitterConfiguration {
        TransmitterConfiguration(beaconID: Int(minor), uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
                                 major: 1, minor: minor, measuredPower: -59, txPower: 0, label: label, x: 0, y: 0)
    }

    static let hostileLabels = [
        "Exit\ntouch PWNED-newline",
        "Exit\r\ntouch PWNED-crlf",
        "Exit\u{2028}touch PWNED-separator",
        "Exit'; touch PWNED-quote; echo '",
        "Exit $(touch PWNED-substitution) `touch PWNED-backtick`",
        "Exit\\\ntouch PWNED-continuation",
    ]

    @Test(arguments: hostileLabels)
    func aHostileLabelStaysInsideItsComment(label: String) throws {
        let script = try ConfigurationFormat.hcitool.render([Self.configuration(label: label, minor: 4001),
                                                             Self.configuration(label: "Till", minor: 4002)])
        // Two configurations: a comment and a command line each, nothing more.
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("# ") && lines[2] == "# Till")
        let run = try HcitoolScriptRun.run(script, in: try HcitoolScriptRun.makeFolder())
        #expect(run.syntaxStatus == 0)
        #expect(run.exitStatus == 0)
        #expect(run.createdFiles.isEmpty, "the label ran a command: \(run.createdFiles)")
        // Set data, parameters and enable, for each of the two transmitters.
        #expect(run.hcitoolCalls.count == 6)
        #expect(run.hcitoolCalls.allSatisfy { Array($0.prefix(4)) == ["-i", "hci0", "cmd", "0x08"] })
        #expect(run.hcitoolCalls.map { $0[4] } == ["0x0008", "0x0006", "0x000a", "0x0008", "0x0006", "0x000a"])
    }

    /// The recipe's bytes are the ones `LECommand` sends and `proxima encode --hcitool` prints.
    @Test func theRecipeCarriesTheAdvertisingDataAndTheBeaconParameters() throws {
        let configuration = Self.configuration(label: "Exit", minor: 4003)
        let run = try HcitoolScriptRun.run(try ConfigurationFormat.hcitool.render([configuration]), in: try HcitoolScriptRun.makeFolder())
        #expect(run.hcitoolCalls.count == 3)
        let data = run.hcitoolCalls[0].dropFirst(5).compactMap { UInt8($0, radix: 16) }
        #expect(data == AdvertisingCommands.setData(configuration.advertisingData))
        #expect(data.count == 32 && data[0] == 30)
        #expect(run.hcitoolCalls[1].dropFirst(5).compactMap { UInt8($0, radix: 16) }
                == [0xA0, 0x00, 0xA0, 0x00, 0x03, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        #expect(run.hcitoolCalls[2].dropFirst(5) == ["01"])
    }
}
