import ArgumentParser
import BeaconGateway
import BeaconServer
import Foundation

/// `proxima device`: a phone's side of a proxima server (docs/apps.md). "Device" here is a
/// registered phone, not the HCI controller `--device hci0` names.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Register a phone as a device of a site, look up the message of the day for a beacon, and list, show or delete devices.",
        subcommands: [Register.self, Message.self, List.self, Show.self, Delete.self])

    /// What the person agreed to share.
    enum Consent: String, ExpressibleByArgument, CaseIterable {
        case none, events, positions

        var flags: DeviceConsent {
            DeviceConsent(events: self != .none, positions: self == .positions)
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a device of a site and print its token (shown once): give it to `proxima gateway --token`.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "The site's id.")
        var site: Int

        @Option(help: "The device's name (leave out with --anonymous).")
        var name: String?

        @Flag(help: "No name: the server keeps only a random identifier.")
        var anonymous = false

        @Option(help: "What the person consents to: none (message lookups only), events, or positions (events and where the device is).")
        var consent: Consent

        @Flag(help: "Print the server's JSON.")
        var json = false

        func validate() throws {
            if anonymous, name != nil { throw ValidationError("--name: an anonymous device has no name") }
            if !anonymous, name == nil { throw ValidationError("--name: expected a name, or --anonymous") }
        }

        func run() async throws {
            let request = NewDevice(siteID: site, name: name, anonymous: anonymous, consent: consent.flags)
            let data = try await connection.send("POST", "/v1/devices", body: try JSONEncoder().encode(request))
            if json {
                try StandardOutput.line(String(decoding: data, as: UTF8.self))
                return
            }
            let registered = try JSONDecoder().decode(RegisteredDevice.self, from: data)
            let device = registered.device
            let who = device.name.map { "'\($0)'" } ?? "anonymous"
            let shares = device.consent.positions ? "events and positions" : device.consent.events ? "events" : "nothing (message lookups only)"
            try StandardOutput.line("device \(device.id) of site \(device.siteID) (\(who)), sharing \(shares)")
            try StandardOutput.line("device token (shown once, store it now): \(registered.token)")
        }
    }

    struct Message: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the message of the day that applies now to a beacon, on the server's clock.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "The beacon's proximity UUID.")
        var uuid: String

        @Option(help: "The beacon's major.")
        var major: UInt16

        @Option(help: "The beacon's minor.")
        var minor: UInt16

        @Flag(help: "Print the server's JSON.")
        var json = false

        func validate() throws {
            guard UUID(uuidString: uuid) != nil else { throw ValidationError("--uuid: expected a proximity UUID, found '\(uuid)'") }
        }

        func run() async throws {
            let data = try await connection.send("GET", "/v1/messages?uuid=\(uuid)&major=\(major)&minor=\(minor)")
            if json {
                try StandardOutput.line(String(decoding: data, as: UTF8.self))
                return
            }
            let lookup = try JSONDecoder().decode(MessageLookup.self, from: data)
            let place = lookup.label ?? "\(uuid):\(major):\(minor)"
            guard let message = lookup.message else {
                try StandardOutput.line("\(place): no message now")
                return
            }
            try StandardOutput.line("\(place): message \(message.id) (\(message.format.rawValue))")
            try StandardOutput.line(message.body)
        }
    }
}
