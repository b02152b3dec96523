import BeaconKit
import ArgumentParser
import BeaconLocate
import BeaconServer
import Foundation

/// `proxima survey`: survey scans recorded by a server with the site's own gateways, saved into
/// the site's map (docs/server.md, "Recording a survey on the server").
struct SurveyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "survey",
        abstract: "Record survey scans with a site's own gateways (a tag or a phone held still at a spot), and save them into the site's map.",
        subcommands: [Record.self, List.self, Save.self, Discard.self])

    struct Record: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record one scan and wait until it is finished (operator or admin token).",
            discussion: "The window runs on the site's clock (its gateways' latest sighting time). Prints the scan; exits 1 when nothing was heard.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "The site whose map the scan is for.")
        var site: Int

        @Option(help: "A carried tag's UUID:major:minor, or the gateway name of a phone that posts its own sightings.")
        var subject: String

        @Option(help: "The spot, X,Y in metres on the site's map.")
        var at: String

        @Option(help: "Seconds to record, 1–120.")
        var seconds = 10.0

        @Flag(help: "Return once the server started the recording, without waiting for it to finish.")
        var noWait = false

        @Flag(help: "Print the server's JSON.")
        var json = false

        func validate() throws {
            guard Position(commaSeparated: at) != nil else { throw ValidationError("--at: expected X,Y in metres, e.g. 3.5,12, found '\(at)'") }
            guard SurveyRecorder.allowedSeconds.contains(seconds) else { throw ValidationError("--seconds: expected 1–120, found \(seconds)") }
        }

        func run() async throws {
            let spot = Position(commaSeparated: at)!
            let body = try JSONSerialization.data(withJSONObject: ["subject": subject, "position": ["x": spot.x, "y": spot.y], "seconds": seconds] as [String: Any])
            let data = try await connection.send("POST", "/v1/sites/\(site)/survey-recordings", body: body)
            var recording = try JSONDecoder().decode(SurveyRecorder.Recording.self, from: data)
            if !noWait {
                // Gateway time runs at about real time; a site whose gateways stopped posting
                // never finishes a window, so the wait has an end.
                let deadline = ContinuousClock.now + .seconds(seconds + 60)
                while [.waiting, .recording].contains(recording.status) {
                    guard ContinuousClock.now < deadline else {
                        throw ValidationError("recording \(recording.id) is still \(recording.status.rawValue) after \(Int(seconds + 60)) s: are the site's gateways posting?")
                    }
                    try await Task.sleep(for: .seconds(1))
                    let listing = try JSONDecoder().decode(SurveyRecorder.Listing.self, from: try await connection.send("GET", "/v1/sites/\(site)/survey-recordings"))
                    guard let current = listing.recordings.first(where: { $0.id == recording.id }) else {
                        throw ValidationError("recording \(recording.id) is gone: it was discarded or saved meanwhile")
                    }
                    recording = current
                }
            }
            if json {
                try StandardOutput.line(String(decoding: try JSONEncoder().encode(recording), as: UTF8.self))
            } else {
                for line in SurveyCommand.describe(recording) { try StandardOutput.line(line) }
            }
            if recording.status == .failed { throw ExitCode(1) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the site's recordings, oldest first.")

        @OptionGroup var connection: ServerConnection

        @Option(help: "The site.")
        var site: Int

        @Flag(help: "Print the server's JSON.")
        var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/sites/\(site)/survey-recordings")
            try connection.show(data, json: json, as: SurveyRecorder.Listing.self) { listing in
                ["site \(listing.siteID): \(listing.recordings.count) recording\(listing.recordings.count == 1 ? "" : "s")"
                    + (listing.clock.map { String(format: ", clock %.1f", $0) } ?? "")]
                    + listing.recordings.flatMap { SurveyCommand.describe($0) }
            }
        }
    }

    struct Save: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Save every finished recording into the site's map, as one new version (operator or admin token).")

        @OptionGroup var connection: ServerConnection

        @Option(help: "The site.")
        var site: Int

        @Flag(help: "Print the server's JSON.")
        var json = false

        func run() async throws {
            let data = try await connection.send("POST", "/v1/sites/\(site)/survey-recordings/save")
            try connection.show(data, json: json, as: SurveyRecorder.Saved.self) { saved in
                ["saved \(saved.tagSurvey) tag scan\(saved.tagSurvey == 1 ? "" : "s") and \(saved.survey) phone scan\(saved.survey == 1 ? "" : "s") "
                    + "into site \(saved.siteID)'s map (version \(saved.mapVersion))"
                    + (saved.dropped > 0 ? "; \(saved.dropped) dropped: their receivers or beacons left the map" : "")]
            }
        }
    }

    struct Discard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Discard one recording (operator or admin token).")

        @OptionGroup var connection: ServerConnection

        @Option(help: "The site.")
        var site: Int

        @Argument(help: "The recording's id.")
        var id: Int

        func run() async throws {
            _ = try await connection.send("DELETE", "/v1/sites/\(site)/survey-recordings/\(id)")
            try StandardOutput.line("discarded recording \(id) of site \(site)")
        }
    }

    static func describe(_ recording: SurveyRecorder.Recording) -> [String] {
        var head = "recording \(recording.id): \(recording.kind.rawValue) \(recording.subject) at "
            + String(format: "%.1f,%.1f", recording.position.x, recording.position.y)
            + String(format: " for %g s, ", recording.seconds) + recording.status.rawValue
        if let start = recording.start, let end = recording.end { head += String(format: " (%.1f–%.1f)", start, end) }
        switch recording.status {
        case .finished:
            head += ", \(recording.packets) packets" + (recording.measuredPower.map { String(format: ", measured power %.1f dBm", $0) } ?? "")
            return [head] + recording.readings.sorted { $0.key < $1.key }.map { "  \($0.key) " + String(format: "%.1f dBm", $0.value) }
        case .failed:
            return [head + ": " + (recording.reason ?? "nothing heard")]
        case .waiting, .recording:
            return [head]
        }
    }
}
