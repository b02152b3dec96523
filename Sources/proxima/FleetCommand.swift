import ArgumentParser
import BeaconGateway
import BeaconServer
import Foundation

/// `proxima fleet`: the server's fleet table (GET /v1/fleet) and its open alerts.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Print the fleet-health table of a proxima server: each beacon's state, last heard, by whom, battery and reasons.")

    @OptionGroup var connection: ServerConnection

    @Option(help: "Only this site's beacons.")
    var site: Int?

    @Flag(help: "Print the server's JSON instead of the table.")
    var json = false

    func run() async throws {
        let client = connection.client
        let query = site.map { "?site=\($0)" } ?? ""
        let summary = try await client.data("GET", "/v1/fleet" + query)
        let alerts = try await client.data("GET", "/v1/fleet/alerts" + query)
        if json {
            try StandardOutput.line(String(decoding: summary, as: UTF8.self))
            return
        }
        let decoder = JSONDecoder()
        let table = FleetTable.lines(try decoder.decode(FleetSummary.self, from: summary),
                                     alerts: try decoder.decode(FleetAlertList.self, from: alerts).alerts)
        for line in table { try StandardOutput.line(line) }
    }
}
