import ArgumentParser
import BeaconServer
import Foundation

/// `proxima checkin`: check-in zones and a device's check-ins (docs/apps.md, "Check-ins").
struct CheckinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkin",
        abstract: "Make zones check-in zones, and read a device's check-ins and loyalty counts.",
        subcommands: [Zone.self, Zones.self, Show.self])

    struct Zone: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a zone a check-in zone, or change its rule (operator or admin token).")

        @OptionGroup var connection: ServerConnection

        @Argument(help: "The zone's id.")
        var zone: Int

        @Option(help: "Seconds inside the zone during one visit before a device checks in.")
        var dwell: Double

        @Option(help: "Seconds out of the zone that end a visit.")
        var absence: Double

        @Flag(help: "Print the server's JSON.")
        var json = false

        func run() async throws {
            let data = try await connection.send("PUT", "/v1/checkin-zones/\(zone)", body: try JSONEncoder().encode(CheckinZoneRule(dwell: dwell, absence: absence)))
            if json { return try StandardOutput.line(String(decoding: data, as: UTF8.self)) }
            try StandardOutput.line(CheckinCommand.describe(try JSONDecoder().decode(CheckinZone.self, from: data)))
        }
    }

    struct Zones: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the check-in zones of a site, or all.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "Only this site's zones.")
        var site: Int?

        func run() async throws {
            let data = try await connection.send("GET", "/v1/checkin-zones" + (site.map { "?site=\($0)" } ?? ""))
            for zone in try JSONDecoder().decode([CheckinZone].self, from: data) { try StandardOutput.line(CheckinCommand.describe(zone)) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a device's latest check-ins and its count per zone (the device's own token, or a read token).")

        @OptionGroup var connection: ServerConnection

        @Argument(help: "The device's id.")
        var device: String

        @Option(help: "Check-ins to print (1–1000).")
        var limit = 100

        @Flag(help: "Print the server's JSON.")
        var json = false

        func validate() throws {
            guard UUID(uuidString: device) != nil else { throw ValidationError("device: expected a device id (a UUID), found '\(device.prefix(40))'") }
            guard (1...1000).contains(limit) else { throw ValidationError("--limit: expected 1–1000, found \(limit)") }
        }

        func run() async throws {
            let data = try await connection.send("GET", "/v1/devices/\(device.lowercased())/checkins?limit=\(limit)")
            if json { return try StandardOutput.line(String(decoding: data, as: UTF8.self)) }
            let checkins = try JSONDecoder().decode(DeviceCheckins.self, from: data)
            for entry in checkins.loyalty {
                try StandardOutput.line("zone \(entry.zoneID): \(entry.count) check-in\(entry.count == 1 ? "" : "s"), last \(QueueCommand.timestamp(entry.last))")
            }
            for entry in checkins.checkins {
                try StandardOutput.line("checked in to zone \(entry.zoneID) at \(QueueCommand.timestamp(entry.time)) (visit from \(QueueCommand.timestamp(entry.visitStart)))")
            }
            if checkins.loyalty.isEmpty { try StandardOutput.line("no check-ins") }
        }
    }

    static func describe(_ zone: CheckinZone) -> String {
        "zone \(zone.zoneID) of site \(zone.siteID): check in after \(QueueCommand.seconds(zone.dwell)) inside, "
            + "a visit ends after \(QueueCommand.seconds(zone.absence)) away"
    }
}
