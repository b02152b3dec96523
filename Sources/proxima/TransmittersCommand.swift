import ArgumentParser
import BeaconHCI
import BeaconKit
import Foundation

struct Transmitters: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Saved transmitter configurations for `proxima advertise --config NAME`.",
        subcommands: [List.self, Add.self, Remove.self, Show.self, On.self, Off.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List saved transmitters.")

        func run() throws {
            let all = try TransmitterStore().load()
            if all.isEmpty {
                try StandardOutput.line("No saved transmitters. Add one with `proxima transmitters add --name NAME --generate-uuid --major 1 --minor 1`.")
                return
            }
            for transmitter in all { try StandardOutput.line(Self.line(transmitter)) }
        }

        static func line(_ transmitter: SavedTransmitter) -> String {
            let identity = transmitter.identity
            return "\(transmitter.name)  \(transmitter.enabled ? "on " : "off")  \(identity.uuid.uuidString)  "
                + "major \(identity.major)  minor \(identity.minor)  power \(transmitter.measuredPower.dBm) dBm"
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Save a transmitter.")

        @Option(help: "Name to save it under.")
        var name: String

        @Option(help: "Proximity UUID.")
        var uuid: String?

        @Flag(help: "Generate a random proximity UUID.")
        var generateUUID = false

        @Option(help: "Major, 0…65535.")
        var major: Int

        @Option(help: "Minor, 0…65535.")
        var minor: Int

        @Option(parsing: .unconditional, help: "Measured power: RSSI at 1 m in dBm.")
        var power: Int = -59

        @Flag(help: "Save it switched off.")
        var off = false

        @Flag(help: "Replace a transmitter of the same name.")
        var replace = false

        func validate() throws {
            if (uuid == nil) == !generateUUID {
                throw ValidationError("give exactly one of --uuid UUID and --generate-uuid")
            }
        }

        func run() throws {
            do {
                let uuid = try generateUUID ? UUID() : BeaconIdentity.parseUUID(self.uuid ?? "")
                let transmitter = SavedTransmitter(
                    name: name,
                    identity: BeaconIdentity(uuid: uuid, major: try BeaconIdentity.parseNumber(major, field: "major"),
                                             minor: try BeaconIdentity.parseNumber(minor, field: "minor")),
                    measuredPower: try BeaconIdentity.parseMeasuredPower(power), enabled: !off)
                let store = TransmitterStore()
                try store.add(transmitter, replace: replace)
                try StandardOutput.line("Saved \(List.line(transmitter)) in \(store.url.path)")
            } catch let error as IdentityInputError {
                throw ValidationError(error.description)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a saved transmitter.")
        @Argument(help: "Its name.") var name: String

        func run() throws {
            let removed = try TransmitterStore().remove(named: name)
            try StandardOutput.line("Removed \(removed.name)")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a saved transmitter and the bytes it advertises.")
        @Argument(help: "Its name.") var name: String

        func run() throws {
            let transmitter = try TransmitterStore().transmitter(named: name)
            let identity = transmitter.identity
            try StandardOutput.line("name:        \(transmitter.name)")
            try StandardOutput.line("state:       \(transmitter.enabled ? "on" : "off")")
            try StandardOutput.line("uuid:        \(identity.uuid.uuidString)")
            try StandardOutput.line("major:       \(identity.major)")
            try StandardOutput.line("minor:       \(identity.minor)")
            try StandardOutput.line("power:       \(transmitter.measuredPower.dBm) dBm")
            try StandardOutput.line("advertising: \(Hex.string(transmitter.frame.advertisingData(), separator: " "))")
        }
    }

    struct On: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Switch a saved transmitter on.")
        @Argument(help: "Its name.") var name: String
        func run() throws {
            try TransmitterStore().setEnabled(true, named: name)
            try StandardOutput.line("\(name) is on")
        }
    }

    struct Off: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Switch a saved transmitter off.")
        @Argument(help: "Its name.") var name: String
        func run() throws {
            try TransmitterStore().setEnabled(false, named: name)
            try StandardOutput.line("\(name) is off")
        }
    }
}
