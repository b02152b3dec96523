import BeaconTesting
import Foundation
import Testing

/// `encode --hcitool` output is meant to be pasted into a shell or piped to `sh`; the device
/// argument must reach hcitool as one word whatever it holds.
@Suite("proxima encode --hcitool in a shell")
struct HcitoolShellSafetyTests {
    static let identity = ["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "1", "--minor", "2"]

    static let hostileDevices = [
        "hci0\ntouch PWNED-newline",
        "hci0; touch PWNED-semicolon",
        "hci0 && touch PWNED-and",
        "$(touch PWNED-substitution)",
        "`touch PWNED-backtick`",
        "hci0'; touch PWNED-quote; echo '",
        "hci0 # comment",
        "",
    ]

    @Test(arguments: hostileDevices)
    func aHostileDeviceStaysOneWord(device: String) async throws {
        let outcome = try await ProximaBinary.run(["encode"] + Self.identity + ["--hcitool", "--device", device])
        #expect(outcome.status == 0)
        let run = try HcitoolScriptRun.run(outcome.standardOutput, in: try HcitoolScriptRun.makeFolder())
        #expect(run.syntaxStatus == 0)
        #expect(run.createdFiles.isEmpty, "the device argument ran a command: \(run.createdFiles)")
        #expect(run.hcitoolCalls.count == 3)
        #expect(run.hcitoolCalls.map { Array($0.prefix(2)) } == Array(repeating: ["-i", device], count: 3))
        #expect(run.hcitoolCalls.map { $0.dropFirst(3).first } == ["0x08", "0x08", "0x08"])
    }

    @Test func anOrdinaryDeviceIsPrintedBare() async throws {
        let outcome = try await ProximaBinary.run(["encode"] + Self.identity + ["--hcitool", "--device", "hci1"])
        #expect(outcome.standardOutput.split(separator: "\n").allSatisfy { $0.hasPrefix("hcitool -i hci1 cmd 0x08 ") })
    }
}
