import ArgumentParser
import BeaconGateway
import BeaconServer
import Foundation

/// `proxima hunt`: treasure hunts on a proxima server (docs/apps.md).
struct HuntCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hunt",
        abstract: "Create treasure hunts (stamps are zones), and read their leaderboards and runs.",
        subcommands: [Create.self, List.self, Leaderboard.self, Runs.self, Progress.self, Delete.self])

    static func describe(_ hunt: Hunt) -> String {
        "hunt \(hunt.id) '\(hunt.name)' of site \(hunt.siteID): \(hunt.stampZoneIDs.count) stamps (zones \(hunt.stampZoneIDs.map(String.init).joined(separator: ","))), "
            + "\(Int(hunt.timeLimit)) s limit, at most \(hunt.maxSpeed) m/s with \(hunt.stampReach) m of reach; reward: \(hunt.reward)"
    }

    static func describe(_ run: HuntRun) -> String {
        let who = run.name ?? "device \(run.deviceID)"
        var line = "\(who): \(run.status.rawValue), \(run.stamps.count) stamps"
        if !run.stamps.isEmpty { line += " (\(run.stamps.map { String($0.number) }.joined(separator: ",")))" }
        if let duration = run.duration { line += " in \(Int(duration.rounded())) s" }
        if let reward = run.reward { line += "; reward: \(reward)" }
        if let reason = run.reason { line += "; \(reason)" }
        return line
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a hunt whose stamps are the given zones, numbered in the order given.")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The site's id.") var site: Int
        @Option(help: "The hunt's name.") var name: String
        @Option(help: "The stamps' zone ids, comma-separated, e.g. 3,4,5.") var stamps: String
        @Option(help: "Seconds from the first stamp to the last.") var timeLimit: Double
        @Option(help: "The fastest believable walking speed between stamps, m/s (server default 3).") var maxSpeed: Double?
        @Option(help: "Metres from a stamp at which its beacon may already be heard (server default 10).") var stampReach: Double?
        @Option(help: "What a finisher wins.") var reward: String
        @Flag(help: "Print the server's JSON.") var json = false

        func zoneIDs() throws -> [Int] {
            try stamps.split(separator: ",").map { part in
                guard let id = Int(part.trimmingCharacters(in: .whitespaces)) else {
                    throw ValidationError("--stamps: expected zone ids separated by commas, found '\(part)'")
                }
                return id
            }
        }

        func validate() throws { _ = try zoneIDs() }

        func run() async throws {
            let body = NewHunt(siteID: site, name: name, stampZoneIDs: try zoneIDs(), timeLimit: timeLimit, maxSpeed: maxSpeed, stampReach: stampReach, reward: reward)
            let data = try await connection.send("POST", "/v1/hunts", body: try JSONEncoder().encode(body))
            try connection.show(data, json: json, as: Hunt.self) { [HuntCommand.describe($0)] }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List hunts, of one site with --site.")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The site's id.") var site: Int?
        @Flag(help: "Print the server's JSON.") var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/hunts" + (site.map { "?site=\($0)" } ?? ""))
            try connection.show(data, json: json, as: [Hunt].self) { $0.isEmpty ? ["no hunts"] : $0.map(HuntCommand.describe) }
        }
    }

    struct Leaderboard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a hunt's finishers, fastest first, and its runs by status.")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The hunt's id.") var hunt: Int
        @Option(help: "At most this many finishers (1…1000).") var limit = 100
        @Flag(help: "Print the server's JSON.") var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/hunts/\(hunt)/leaderboard?limit=\(limit)")
            try connection.show(data, json: json, as: HuntLeaderboard.self) { board in
                board.leaders.map { "\($0.rank). \($0.name ?? "device \($0.deviceID)") \(Int($0.duration.rounded())) s" }
                    + [board.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")]
            }
        }
    }

    struct Runs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print every device's run of a hunt (staff), with the reason of refusals.")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The hunt's id.") var hunt: Int
        @Option(help: "Only runs in this status: collecting, finished, refused or expired.") var status: String?
        @Option(help: "At most this many runs (1…1000).") var limit = 100
        @Flag(help: "Print the server's JSON.") var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/hunts/\(hunt)/runs?limit=\(limit)" + (status.map { "&status=\($0)" } ?? ""))
            try connection.show(data, json: json, as: [HuntRun].self) { $0.isEmpty ? ["no runs"] : $0.map(HuntCommand.describe) }
        }
    }

    struct Progress: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a device's runs in its site's hunts (with the device's own token).")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The device's id.") var device: String
        @Flag(help: "Print the server's JSON.") var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/devices/\(device)/hunts")
            try connection.show(data, json: json, as: [HuntRun].self) { runs in
                runs.isEmpty ? ["no stamps collected yet"] : runs.map { "hunt \($0.huntID): " + HuntCommand.describe($0) }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a hunt with its runs.")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The hunt's id.") var hunt: Int

        func run() async throws {
            _ = try await connection.send("DELETE", "/v1/hunts/\(hunt)")
            try StandardOutput.line("hunt \(hunt) deleted")
        }
    }
}
