import BeaconHCI
import BeaconKit
import Foundation
import Testing

@Suite struct LECommandTests {
    static let beacon = IBeaconFrame(identity: BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
                                                              major: 1, minor: 2), measuredPower: MeasuredPower(-59))

    /// The Raspberry Pi recipe: `hcitool -i hci0 cmd 0x08 0x0006 A0 00 A0 00 03 00 00 00 00 00 00 00 00 07 00`.
    @Test func advertisingParametersMatchTheHcitoolRecipe() {
        let command = LECommand.setAdvertisingParameters(interval: BeaconAdvertiser.defaultInterval)
        #expect(command.opcode == HCIOpcode(group: 0x08, command: 0x0006))
        #expect(command.parameters == [0xA0, 0x00, 0xA0, 0x00, 0x03, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        #expect(command.body.prefix(3) == [0x06, 0x20, 15])
    }

    /// `hcitool -i hci0 cmd 0x08 0x0008 1E 02 01 1A 1A FF 4C 00 02 15 <uuid> 00 01 00 02 C5 00`.
    @Test func advertisingDataIsLengthThenThirtyOneBytes() {
        let command = LECommand.setAdvertisingData(Self.beacon.advertisingData())
        #expect(command.opcode.rawValue == 0x2008)
        #expect(command.parameters.count == 32)
        #expect(command.parameters.prefix(10) == [0x1E, 0x02, 0x01, 0x1A, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15])
        // Major 1, minor 2 big-endian, power C5, then the one byte of zero padding.
        #expect(Array(command.parameters[26..<32]) == [0x00, 0x01, 0x00, 0x02, 0xC5, 0x00])
    }

    @Test func scanCommandsArePassiveWithoutDuplicateFiltering() {
        let commands = ScanSession.startCommands(ScanSettings())
        #expect(commands.map(\.opcode) == [.leSetScanEnable, .leSetScanParameters, .leSetScanEnable])
        #expect(commands[1].parameters == [0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        #expect(commands[2].parameters == [0x01, 0x00])
        #expect(ScanSession.startCommands(ScanSettings(active: true))[1].parameters.first == 0x01)
    }

    @Test func startPlanDisablesSetsParametersDataAndEnables() {
        let steps = BeaconAdvertiser.startSteps(Self.beacon)
        #expect(steps.map(\.command.opcode) == [.leSetAdvertisingEnable, .leSetAdvertisingParameters,
                                                .leSetAdvertisingData, .leSetAdvertisingEnable])
        #expect(steps.last?.command.parameters == [0x01])
        #expect(steps[1].summary.contains("every 100 ms"))
    }

    @Test(arguments: [("100ms", 160 as UInt16), ("100 ms", 160), ("1s", 1600), ("20", 32), ("152.5ms", 244)])
    func intervalsParse(text: String, units: UInt16) {
        #expect(LEInterval.parse(text)?.units == units)
    }

    @Test func opcodeAndStatusNamesComeFromTheSpec() {
        #expect(HCIOpcode.leSetAdvertisingEnable.description == "LE Set Advertising Enable (0x200A)")
        #expect(HCIOpcode(rawValue: 0xFC01).description == "opcode 0xFC01 (OGF 0x3F, OCF 0x1)")
        #expect(HCIStatus(rawValue: 0x12).description == "Invalid HCI Command Parameters (0x12)")
        #expect(HCIStatus(rawValue: 0x2B).description == "Reserved Error Code (0x2B)")
    }

    @Test func eventLengthMustMatchTheBytes() {
        #expect(throws: DecodeError(field: "parameter total length", offset: 1, expected: "2 (the bytes that follow)", found: "4")) {
            try HCIEvent(body: [0x0E, 0x04, 0x01, 0x03])
        }
    }
}
