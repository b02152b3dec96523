import BeaconHCI
import BeaconKit
import Testing

/// Inputs found by `Fuzz/run.sh hci` and `Fuzz/run.sh capture` (docs/reliability.md#fuzzing),
/// kept as bytes so each finding stays fixed.
@Suite struct HCIFuzzRegressionTests {
    /// H4 `04 0E 04 01 0C 20 00`: a Command Complete event with four parameter bytes. Read as a
    /// Command Status it used to give a status whose re-encoded event had another code.
    @Test func commandCompleteIsNotReadAsCommandStatus() throws {
        let event = try HCIEvent(body: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
        #expect(throws: DecodeError(field: "event code", offset: 0, expected: "\(HCIEventCode.commandStatus)",
                                    found: "\(HCIEventCode.commandComplete)")) {
            try CommandStatus(event: event)
        }
        let complete = try CommandComplete(event: event)
        #expect(complete.event == event)
        #expect(complete.opcode == HCIOpcode(rawValue: 0x200C))
    }

    @Test func commandStatusIsNotReadAsCommandComplete() throws {
        let event = try HCIEvent(body: [0x0F, 0x04, 0x00, 0x01, 0x0C, 0x20])
        let failure = try #require(throws: DecodeError.self) { try CommandComplete(event: event) }
        #expect(failure.field == "event code" && failure.offset == 0)
        #expect(try CommandStatus(event: event).event == event)
    }
}
