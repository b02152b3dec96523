import ArgumentParser
import BeaconServer
import Foundation

/// `proxima messages`: an operator manages the messages of the day (docs/apps.md). A phone's
/// lookup of the message for one beacon is `proxima device message`.
struct MessagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages",
        abstract: "Add, list, show and remove the messages of the day of a proxima server's zones and beacons.",
        subcommands: [Add.self, List.self, Show.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Attach a message to a zone or a beacon, with an optional schedule; HTML is sanitised by the server, which lists what it removed.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "The zone's id (or give --beacon).")
        var zone: Int?

        @Option(help: "The beacon's id (or give --zone).")
        var beacon: Int?

        @Option(help: "Plain text.")
        var text: String?

        @Option(help: "HTML (links, emphasis, lists, paragraphs; everything else is removed).")
        var html: String?

        @Option(help: "Read HTML from this file.")
        var htmlFile: String?

        @Option(help: "First local date it applies, YYYY-MM-DD.")
        var from: String?

        @Option(help: "Last local date it applies, YYYY-MM-DD.")
        var to: String?

        @Option(help: "Days of the week, e.g. mon,tue,fri.")
        var days: String?

        @Option(help: "Time of day, HH:MM-HH:MM (an end before the start runs past midnight).")
        var hours: String?

        @Option(help: "The venue's IANA time zone, e.g. Europe/London.")
        var timeZone = "UTC"

        @Flag(help: "Print the server's JSON.")
        var json = false

        func validate() throws {
            if (zone == nil) == (beacon == nil) { throw ValidationError("--zone: give exactly one of --zone and --beacon") }
            if [text, html, htmlFile].compactMap({ $0 }).count != 1 {
                throw ValidationError("--text: give exactly one of --text, --html and --html-file")
            }
            _ = try weekdays()
            _ = try timeOfDay()
        }

        func weekdays() throws -> [MessageSchedule.Weekday]? {
            guard let days else { return nil }
            return try days.split(separator: ",").map { name in
                guard let day = MessageSchedule.Weekday(rawValue: name.trimmingCharacters(in: .whitespaces).lowercased()) else {
                    throw ValidationError("--days: expected mon, tue, wed, thu, fri, sat or sun, found '\(name.prefix(20))'")
                }
                return day
            }
        }

        func timeOfDay() throws -> MessageSchedule.TimeOfDay? {
            guard let hours else { return nil }
            let ends = hours.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2 else { throw ValidationError("--hours: expected HH:MM-HH:MM, found '\(hours.prefix(20))'") }
            return MessageSchedule.TimeOfDay(start: String(ends[0]), end: String(ends[1]))
        }

        func run() async throws {
            let body: String
            let format: DayMessage.Format
            if let text { (body, format) = (text, .text) }
            else if let html { (body, format) = (html, .html) }
            else {
                let path = htmlFile ?? ""
                guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("--html-file: cannot read '\(path)'") }
                (body, format) = (String(decoding: data, as: UTF8.self), .html)
            }
            let schedule = MessageSchedule(from: from, to: to, days: try weekdays(), timeOfDay: try timeOfDay(), timeZone: timeZone)
            let request = NewDayMessage(zoneID: zone, beaconID: beacon, format: format, body: body, schedule: schedule)
            let data = try await connection.send("POST", "/v1/messages", body: try JSONEncoder().encode(request))
            try connection.show(data, json: json, as: SavedDayMessage.self) { saved in
                ["message \(saved.message.id) added: \(List.line(saved.message))"]
                    + (saved.removed.isEmpty ? [] : ["sanitising removed: \(saved.removed.joined(separator: ", "))"])
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the messages, all or those of a site, zone or beacon.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "Only this site's messages.")
        var site: Int?

        @Option(help: "Only this zone's messages.")
        var zone: Int?

        @Option(help: "Only this beacon's messages.")
        var beacon: Int?

        @Flag(help: "Print the server's JSON.")
        var json = false

        func run() async throws {
            let filters = [("site", site), ("zone", zone), ("beacon", beacon)].compactMap { name, value in value.map { "\(name)=\($0)" } }
            let data = try await connection.send("GET", "/v1/messages" + (filters.isEmpty ? "" : "?" + filters.joined(separator: "&")))
            if json { return try StandardOutput.line(String(decoding: data, as: UTF8.self)) }
            let messages = try JSONDecoder().decode([DayMessage].self, from: data)
            if messages.isEmpty { return try StandardOutput.line("no messages") }
            for message in messages { try StandardOutput.line("\(message.id)  \(Self.line(message))") }
        }

        /// Where it is attached, its schedule in words, and the start of its body on one line.
        static func line(_ message: DayMessage) -> String {
            let place = message.zoneID.map { "zone \($0)" } ?? message.beaconID.map { "beacon \($0)" } ?? "?"
            let schedule = message.schedule
            var when: [String] = []
            if schedule.from != nil || schedule.to != nil { when.append("\(schedule.from ?? "…") to \(schedule.to ?? "…")") }
            if let days = schedule.days { when.append(days.map(\.rawValue).joined(separator: ",")) }
            if let window = schedule.timeOfDay { when.append("\(window.start)-\(window.end)") }
            let times = when.isEmpty ? "always" : when.joined(separator: " ") + " " + schedule.timeZone
            let flat = message.body.replacingOccurrences(of: "\n", with: " ")
            let preview = flat.count > 60 ? flat.prefix(59) + "…" : flat
            return "site \(message.siteID) \(place)  \(times)  \(message.format.rawValue): \(preview)"
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print one message in full.")

        @OptionGroup var connection: ServerConnection

        @Argument(help: "The message's id.")
        var id: Int

        @Flag(help: "Print the server's JSON.")
        var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/messages/\(id)")
            try connection.show(data, json: json, as: DayMessage.self) { message in
                ["\(message.id)  \(List.line(message))", message.body]
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a message.")

        @OptionGroup var connection: ServerConnection

        @Argument(help: "The message's id.")
        var id: Int

        func run() async throws {
            _ = try await connection.send("DELETE", "/v1/messages/\(id)")
            try StandardOutput.line("message \(id) removed")
        }
    }
}
