import ArgumentParser
import BeaconServer
import Foundation

/// An operator's side of `proxima device`: list, show and delete registered phones.
extension DeviceCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the registered devices (all sites, or one), oldest first; needs an operator or admin token.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "Only this site's devices.")
        var site: Int?

        @Flag(help: "Print the server's JSON (one array per page of 1000).")
        var json = false

        /// Follows the server's pages (ids ascending) until one comes back short.
        func run() async throws {
            var after: String?
            var printed = 0
            while true {
                var query = ["limit=\(Self.pageSize)"]
                if let site { query.append("site=\(site)") }
                if let after { query.append("after=\(after)") }
                let data = try await connection.send("GET", "/v1/devices?" + query.joined(separator: "&"))
                if json { try StandardOutput.line(String(decoding: data, as: UTF8.self)) }
                let devices = try JSONDecoder().decode([Device].self, from: data)
                if !json { for device in devices { try StandardOutput.line(Self.line(device)) } }
                printed += devices.count
                guard devices.count == Self.pageSize, let last = devices.last else { break }
                after = last.id
            }
            if printed == 0, !json { try StandardOutput.line("no devices") }
        }

        static let pageSize = 1000

        /// One device per line: id, site, who, what it shares, when it registered (UTC).
        static func line(_ device: Device) -> String {
            let who = device.name.map { "'\($0)'" } ?? "anonymous"
            let shares = device.consent.positions ? "events+positions" : device.consent.events ? "events" : "none"
            let registered = Date(timeIntervalSince1970: device.createdAt).formatted(.iso8601)
            return "\(device.id)  site \(device.siteID)  \(who)  shares \(shares)  registered \(registered)"
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print one device; an operator's token, or the device's own.")

        @OptionGroup var connection: ServerConnection

        @Argument(help: "The device's id.")
        var id: String

        @Flag(help: "Print the server's JSON.")
        var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/devices/\(try DeviceCommand.pathSegment(id))")
            try connection.show(data, json: json, as: Device.self) { [List.line($0)] }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a device with its token and events; an operator's token, or the device's own (a person leaving).")

        @OptionGroup var connection: ServerConnection

        @Argument(help: "The device's id.")
        var id: String

        func run() async throws {
            _ = try await connection.send("DELETE", "/v1/devices/\(try DeviceCommand.pathSegment(id))")
            try StandardOutput.line("device \(id) deleted")
        }
    }

    /// Device ids are UUIDs; anything else is refused here, before it goes into a URL path.
    static func pathSegment(_ id: String) throws -> String {
        guard let uuid = UUID(uuidString: id) else {
            throw ValidationError("id: expected a device id (a UUID), found '\(id.prefix(40))'")
        }
        return uuid.uuidString.lowercased()
    }
}
