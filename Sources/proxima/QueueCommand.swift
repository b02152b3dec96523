import ArgumentParser
import BeaconServer
import Foundation

/// `proxima queue`: queues measured from devices' zones (docs/apps.md, "Queues").
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Create queues (an entry zone and a service zone) and read their waits.",
        subcommands: [Create.self, List.self, Show.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a queue between two zones of one site (operator or admin token).")

        @OptionGroup var connection: ServerConnection

        @Option(help: "The queue's name.")
        var name: String

        @Option(help: "The zone whose enter starts a device's wait.")
        var entryZone: Int

        @Option(help: "The zone whose enter ends it.")
        var serviceZone: Int

        @Option(help: "Seconds unseen in both zones after which a device not served counts as abandoned (default 300).")
        var abandonAfter: Double?

        @Flag(help: "Print the server's JSON.")
        var json = false

        func run() async throws {
            let body = try JSONEncoder().encode(NewQueue(name: name, entryZoneID: entryZone, serviceZoneID: serviceZone, abandonAfter: abandonAfter))
            let data = try await connection.send("POST", "/v1/queues", body: body)
            if json { return try StandardOutput.line(String(decoding: data, as: UTF8.self)) }
            try StandardOutput.line(QueueCommand.describe(try JSONDecoder().decode(Queue.self, from: data)))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the queues of a site, or all.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "Only this site's queues.")
        var site: Int?

        @Flag(help: "Print the server's JSON.")
        var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/queues" + (site.map { "?site=\($0)" } ?? ""))
            if json { return try StandardOutput.line(String(decoding: data, as: UTF8.self)) }
            for queue in try JSONDecoder().decode([Queue].self, from: data) { try StandardOutput.line(QueueCommand.describe(queue)) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a queue's waits: who waits now, the last 15 minutes, each hour and the hours together.")

        @OptionGroup var connection: ServerConnection

        @Argument(help: "The queue's id.")
        var id: Int

        @Option(help: "Hours to report (1–168).")
        var hours = 24

        @Flag(help: "Print the server's JSON.")
        var json = false

        func validate() throws {
            guard (1...168).contains(hours) else { throw ValidationError("--hours: expected 1–168, found \(hours)") }
        }

        func run() async throws {
            let data = try await connection.send("GET", "/v1/queues/\(id)?hours=\(hours)")
            if json { return try StandardOutput.line(String(decoding: data, as: UTF8.self)) }
            for line in QueueCommand.describe(try JSONDecoder().decode(QueueReport.self, from: data), hours: hours) {
                try StandardOutput.line(line)
            }
        }
    }

    static func describe(_ queue: Queue) -> String {
        "queue \(queue.id) '\(queue.name)' of site \(queue.siteID): zone \(queue.entryZoneID) → zone \(queue.serviceZoneID), "
            + "abandoned after \(seconds(queue.abandonAfter)) unseen"
    }

    static func describe(_ report: QueueReport, hours: Int) -> [String] {
        var lines = [describe(report.queue) + ", clock \(timestamp(report.clock))"]
        lines.append("now: \(report.live.waiting) waiting" + (report.live.longestWait.map { ", longest \(seconds($0)) so far" } ?? ""))
        lines.append("last 15 min: " + summary(report.last15Minutes))
        for hour in report.hours { lines.append("hour from \(timestamp(hour.from)): " + summary(hour)) }
        lines.append("last \(hours) h: " + summary(report.total))
        return lines
    }

    static func summary(_ waits: WaitSummary) -> String {
        var text = "\(waits.served) served"
        if let p50 = waits.p50, let p90 = waits.p90 { text += " (wait p50 \(seconds(p50)), p90 \(seconds(p90)))" }
        return text + ", \(waits.abandoned) abandoned"
    }

    static func seconds(_ value: Double) -> String { String(format: "%.0f s", value) }

    static func timestamp(_ time: Double) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: time))
    }
}
