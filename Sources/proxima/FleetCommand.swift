import ArgumentParser
import AsyncHTTPClient
import BeaconServer
import Foundation
import NIOCore
import NIOFoundationCompat

/// `proxima fleet`: the server's fleet table (GET /v1/fleet) and its open alerts.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Print the fleet-health table of a proxima server: each beacon's state, last heard, by whom, battery and reasons.")

    @Option(help: "The server's URL, e.g. http://127.0.0.1:8080.")
    var server: String

    @Option(help: "A token with read access (admin, operator or read-only).")
    var token: String

    @Option(help: "Only this site's beacons.")
    var site: Int?

    @Flag(help: "Print the server's JSON instead of the table.")
    var json = false

    func validate() throws {
        guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--server: expected an http:// or https:// URL, found '\(server)'")
        }
    }

    func run() async throws {
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        let query = site.map { "?site=\($0)" } ?? ""
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let summary = try await get(base + "/v1/fleet" + query, client: client)
            let alerts = try await get(base + "/v1/fleet/alerts" + query, client: client)
            try await client.shutdown()
            if json {
                try StandardOutput.line(String(decoding: summary, as: UTF8.self))
                return
            }
            let decoder = JSONDecoder()
            let table = FleetTable.lines(try decoder.decode(FleetSummary.self, from: summary),
                                         alerts: try decoder.decode(FleetAlertList.self, from: alerts).alerts)
            for line in table { try StandardOutput.line(line) }
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private func get(_ url: String, client: HTTPClient) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024 * 1024)
        guard response.status.code == 200 else {
            throw FleetRequestFailure(description: "\(url): the server answered \(response.status.code) \(String(buffer: body).prefix(500))")
        }
        return Data(buffer: body)
    }
}

/// A refused or failed request: printed as `Error: …` without the usage text.
struct FleetRequestFailure: Error, CustomStringConvertible {
    var description: String
}
