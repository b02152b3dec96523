import ArgumentParser
import BeaconServer
import Foundation

/// `proxima offers`: offers on zones, the site's rate limit, and what a device was offered.
struct OffersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offers",
        abstract: "Attach offers to zones, set a site's per-device rate limit, and read what a device was offered.",
        subcommands: [Create.self, List.self, Delete.self, Settings.self, Received.self])

    static func describe(_ offer: Offer) -> String {
        "offer \(offer.id) on zone \(offer.zoneID) of site \(offer.siteID): \(offer.title)"
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Attach an offer to a zone.")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The zone's id.") var zone: Int
        @Option(help: "A short title (at most 100 characters).") var title: String
        @Option(help: "The offer's text (at most 1,000 characters).") var body: String
        @Flag(help: "Print the server's JSON.") var json = false

        func run() async throws {
            let data = try await connection.send("POST", "/v1/offers", body: try JSONEncoder().encode(NewOffer(zoneID: zone, title: title, body: body)))
            try connection.show(data, json: json, as: Offer.self) { [OffersCommand.describe($0)] }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List offers, of one site or zone.")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The site's id.") var site: Int?
        @Option(help: "The zone's id.") var zone: Int?
        @Flag(help: "Print the server's JSON.") var json = false

        func run() async throws {
            let query = [site.map { "site=\($0)" }, zone.map { "zone=\($0)" }].compactMap { $0 }.joined(separator: "&")
            let data = try await connection.send("GET", "/v1/offers" + (query.isEmpty ? "" : "?" + query))
            try connection.show(data, json: json, as: [Offer].self) { $0.isEmpty ? ["no offers"] : $0.map(OffersCommand.describe) }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an offer.")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The offer's id.") var offer: Int

        func run() async throws {
            _ = try await connection.send("DELETE", "/v1/offers/\(offer)")
            try StandardOutput.line("offer \(offer) deleted")
        }
    }

    struct Settings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a site's offer settings and counts; with any option, change them (the others keep their values).")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The site's id.") var site: Int
        @Option(help: "Offers one device may be made per window.") var perWindow: Int?
        @Option(help: "Seconds of the rate limit's window.") var window: Double?
        @Option(help: "A beacon is near within this many metres (the engine's accuracy).") var reach: Double?
        @Option(help: "Choices in one offer.") var maxChoices: Int?
        @Option(help: "Seconds a reading stays current.") var freshness: Double?
        @Flag(help: "Print the server's JSON.") var json = false

        func run() async throws {
            var data = try await connection.send("GET", "/v1/offer-settings/\(site)")
            if perWindow != nil || window != nil || reach != nil || maxChoices != nil || freshness != nil {
                var settings = try JSONDecoder().decode(SiteOfferSettings.self, from: data).settings
                settings.perWindow = perWindow ?? settings.perWindow
                settings.window = window ?? settings.window
                settings.reach = reach ?? settings.reach
                settings.maxChoices = maxChoices ?? settings.maxChoices
                settings.freshness = freshness ?? settings.freshness
                data = try await connection.send("PUT", "/v1/offer-settings/\(site)", body: try JSONEncoder().encode(settings))
            }
            try connection.show(data, json: json, as: SiteOfferSettings.self) { current in
                let settings = current.settings
                return ["site \(current.siteID): at most \(settings.perWindow) offers per device per \(Int(settings.window)) s, "
                        + "up to \(settings.maxChoices) choices within \(settings.reach) m (readings of the last \(Int(settings.freshness)) s)",
                        "delivered \(current.delivered), refused by the rate limit \(current.refused)"]
            }
        }
    }

    struct Received: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the offers made to a device, newest first (with the device's own token).")
        @OptionGroup var connection: ServerConnection
        @Option(help: "The device's id.") var device: String
        @Flag(help: "Print the server's JSON.") var json = false

        func run() async throws {
            let data = try await connection.send("GET", "/v1/devices/\(device)/offers")
            try connection.show(data, json: json, as: DeviceOffers.self) { offers in
                var lines = ["delivered \(offers.delivered), refused by the rate limit \(offers.refused)"]
                for delivery in offers.deliveries {
                    lines.append("at \(delivery.time): a choice of \(delivery.choices.count)")
                    for (index, choice) in delivery.choices.enumerated() {
                        lines.append("  \(index + 1). \(choice.label): \(choice.title) (\(choice.proximity), \(String(format: "%.1f", choice.accuracy)) m)")
                    }
                }
                return lines
            }
        }
    }
}
