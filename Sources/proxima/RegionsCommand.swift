import ArgumentParser
import BeaconKit
import Foundation

struct Regions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the monitored regions kept across restarts (regions.json in the configuration directory).",
        subcommands: [Add.self, List.self, Remove.self],
        defaultSubcommand: List.self)

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Store a region (replaces one with the same identifier).")

        @Argument(help: ArgumentHelp("The region's beacons.", valueName: "UUID[:MAJOR[:MINOR]]"))
        var constraint: String

        @Option(help: "The region's name (default: the constraint text).")
        var identifier: String?

        @Flag(inversion: .prefixedNo, help: "Report entering.")
        var notifyEntry = true

        @Flag(inversion: .prefixedNo, help: "Report leaving.")
        var notifyExit = true

        @Flag(help: "Report the current state as soon as monitoring starts.")
        var notifyStateOnStart = false

        func run() throws {
            var region: BeaconRegion
            do { region = try BeaconRegion(parsing: constraint, identifier: identifier) } catch {
                throw ValidationError(error.description)
            }
            region.notifyOnEntry = notifyEntry
            region.notifyOnExit = notifyExit
            region.notifyEntryStateOnStart = notifyStateOnStart
            let store = RegionStore()
            let regions = try store.add(region)
            try StandardOutput.line("stored \(region); \(regions.count) region(s) in \(store.url.path)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the stored regions.")

        @Flag(help: "Print JSON.")
        var json = false

        func run() throws {
            let regions = try RegionStore().load()
            if json {
                try StandardOutput.jsonLine(regions)
                return
            }
            if regions.isEmpty { try StandardOutput.line("no stored regions (add one with `proxima regions add UUID[:MAJOR[:MINOR]]`)") }
            for region in regions {
                var flags: [String] = []
                if region.notifyOnEntry { flags.append("entry") }
                if region.notifyOnExit { flags.append("exit") }
                if region.notifyEntryStateOnStart { flags.append("state-on-start") }
                try StandardOutput.line(Terminal.pad(region.identifier, 24) + Terminal.pad(region.constraintText, 50) + flags.joined(separator: ","))
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a stored region by identifier.")

        @Argument var identifier: String

        func run() throws {
            guard try RegionStore().remove(identifier: identifier) else {
                throw EngineCommandError("no stored region has the identifier '\(identifier)' (see `proxima regions list`)")
            }
            try StandardOutput.line("removed \(identifier)")
        }
    }
}
