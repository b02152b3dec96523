import BeaconKit
import ArgumentParser
import BeaconLocate
import Foundation

struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route", abstract: "The shortest walkable route on a site map, through its doors.")

    @Option(help: "Site map JSON.")
    var map: String

    @Option(help: "Start position X,Y in metres.")
    var from: String

    @Option(help: "Destination: a room name, a point of interest's name, or X,Y.")
    var to: String

    @Flag(help: "Print the route as one JSON object.")
    var json = false

    func validate() throws {
        guard Position(commaSeparated: from) != nil else { throw ValidationError("--from: expected X,Y in metres, found \"\(from)\"") }
    }

    func run() throws {
        let site: SiteMap
        do { site = try SiteMapFile.load(map) } catch {
            printError("\(map): \(error)")
            throw ExitCode.failure
        }
        let start = Position(commaSeparated: from)!
        let destination: Router.Destination
        if site.room(named: to) != nil {
            destination = .room(to)
        } else if site.pointsOfInterest.contains(where: { $0.name == to }) {
            destination = .pointOfInterest(to)
        } else if let point = Position(commaSeparated: to) {
            destination = .point(point)
        } else {
            printError("--to: expected a room (\(site.rooms.map(\.name).joined(separator: ", "))), a point of interest or X,Y; found \"\(to)\"")
            throw ExitCode.failure
        }
        guard let route = Router(map: site).route(from: start, to: destination) else {
            printError("no walkable route from \(from) to \(to) on this map")
            throw ExitCode.failure
        }
        if json {
            try StandardOutput.jsonLine(route)
            return
        }
        try StandardOutput.line(String(format: "route to %@: %.1f m%@", to, route.length, route.doors.isEmpty ? "" : " through \(route.doors.joined(separator: ", "))"))
        for point in route.waypoints { try StandardOutput.line(String(format: "  %.2f,%.2f", point.x, point.y)) }
    }
}
