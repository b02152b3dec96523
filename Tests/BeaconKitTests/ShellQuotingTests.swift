import BeaconKit
import Foundation
import Testing

@Suite struct ShellQuotingTests {
    @Test(arguments: [
        ("hci0", "hci0"),
        ("00:11:22:33:44:55", "00:11:22:33:44:55"),
        ("", "''"),
        ("hci0; reboot", "'hci0; reboot'"),
        ("it's", #"'it'\''s'"#),
        ("a\nb", "'a\nb'"),
        ("$(id)", "'$(id)'"),
    ])
    func wordsAreBareOnlyWhenNothingInThemIsSpecial(text: String, expected: String) {
        #expect(ShellQuoting.word(text) == expected)
    }

    @Test func aCommentIsOneLineWhateverTheTextHolds() {
        let comment = ShellQuoting.comment("Exit\ntouch x\r\u{2028}\u{85}\u{1B}[2J\\")
        #expect(comment == #"# Exit\ntouch x\r\u{2028}\u{85}\u{1b}[2J\\"#)
        #expect(!comment.contains { $0.isNewline })
    }

    @Test func theRecipeIsTheLECommandsParameters() {
        let data = IBeaconFrame(identity: BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2),
                                measuredPower: MeasuredPower(-59)).advertisingData()
        let lines = AdvertisingCommands.hcitoolRecipe(advertisingData: data, device: "hci1")
        #expect(lines.count == 3)
        #expect(lines[0] == "hcitool -i hci1 cmd 0x08 0x0008 " + Hex.string(AdvertisingCommands.setData(data), separator: " "))
        #expect(lines[1] == "hcitool -i hci1 cmd 0x08 0x0006 a0 00 a0 00 03 00 00 00 00 00 00 00 00 07 00")
        #expect(lines[2] == "hcitool -i hci1 cmd 0x08 0x000a 01")
        #expect(AdvertisingCommands.setData(data).count == 32)
    }
}
