import ArgumentParser
import BeaconKit
import Foundation

struct Encode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the iBeacon advertising data for an identity.",
        discussion: """
            Prints the 30 bytes of advertising data as hex. With --hcitool, prints the three \
            hcitool commands that make a Linux controller advertise it every 100 ms.
            """
    )

    @Option(help: "Proximity UUID, e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0.")
    var uuid: String

    @Option(parsing: .unconditional, help: "Major, 0…65535.")
    var major: Int

    @Option(parsing: .unconditional, help: "Minor, 0…65535.")
    var minor: Int

    @Option(parsing: .unconditional, help: "Measured power: RSSI in dBm at 1 m, -128…127.")
    var power: Int = -59

    @Option(help: "Flags byte in hex: 0x1a (the book, AirLocate) or 0x06.")
    var flags: String = "0x1a"

    @Flag(help: "Print the hcitool commands of the Raspberry Pi recipe.")
    var hcitool = false

    @Option(help: "HCI device for --hcitool.")
    var device: String = "hci0"

    @Flag(help: "Print a JSON object.")
    var json = false

    func validate() throws {
        _ = try advertisement()
        if hcitool && json { throw ValidationError("choose one of --hcitool and --json") }
    }

    func advertisement() throws -> IBeaconAdvertisement {
        do {
            let identity = BeaconIdentity(uuid: try BeaconIdentity.parseUUID(uuid),
                                          major: try BeaconIdentity.parseNumber(major, field: "major"),
                                          minor: try BeaconIdentity.parseNumber(minor, field: "minor"))
            return IBeaconAdvertisement(frame: IBeaconFrame(identity: identity,
                                                            measuredPower: try BeaconIdentity.parseMeasuredPower(power)),
                                        flags: try AdvertisingFlags.parse(flags))
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let advertisement = try advertisement()
        if hcitool {
            for command in advertisement.hcitoolCommands(device: device) { try StandardOutput.line(command) }
        } else if json {
            try StandardOutput.jsonLine(advertisement)
        } else {
            try StandardOutput.line(Hex.string(advertisement.advertisingData))
        }
    }
}
