@testable import BeaconServer
import Foundation
import Testing

/// `proxima hunt` and `proxima offers` against a real `proxima serve --demo`.
@Suite("proxima hunt and proxima offers")
struct HuntCommandTests {
    @Test func createsHuntsAndOffersAndReportsRefusalsWithTheirField() async throws {
        let directory = NSTemporaryDirectory() + "proxima-hunt-command-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "hunt-command", extra: ["--demo"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let site = try #require(try await admin.get("/v1/sites", as: [Site].self).first)
        let zones = try await admin.get("/v1/sites/\(site.id)/zones", as: [Zone].self)
        try #require(zones.count >= 2)
        let connection = ["--server", base.absoluteString, "--token", ProximaProcess.adminToken]
        func run(_ arguments: [String]) async throws -> (Int32, String) {
            let process = try ProximaProcess(arguments)
            let status = try await process.waitForExit(timeout: .seconds(30))
            return (status, process.outputText)
        }

        let stamps = zones.prefix(2).map { String($0.id) }.joined(separator: ",")
        let (created, createdText) = try await run(["hunt", "create"] + connection + ["--site", "\(site.id)", "--name", "Shop stamps",
                                                    "--stamps", stamps, "--time-limit", "600", "--reward", "A coffee"])
        #expect(created == 0, "\(createdText)")
        #expect(createdText.contains("'Shop stamps' of site \(site.id): 2 stamps (zones \(stamps)), 600 s limit"), "\(createdText)")
        let hunts = try await admin.get("/v1/hunts?site=\(site.id)", as: [Hunt].self)
        #expect(hunts.map(\.name) == ["Shop stamps"] && hunts.first?.reward == "A coffee")
        let huntID = try #require(hunts.first?.id)

        let (_, listed) = try await run(["hunt", "list"] + connection + ["--site", "\(site.id)"])
        #expect(listed.contains("hunt \(huntID) 'Shop stamps'"), "\(listed)")
        let (_, board) = try await run(["hunt", "leaderboard"] + connection + ["--hunt", "\(huntID)"])
        #expect(board.contains("collecting 0, expired 0, finished 0, refused 0"), "\(board)")

        // The server's refusal names the field; a bad option is refused before any request.
        let (refused, refusedText) = try await run(["hunt", "create"] + connection + ["--site", "\(site.id)", "--name", "x",
                                                    "--stamps", "\(zones[0].id),999999", "--time-limit", "600", "--reward", "r"])
        #expect(refused != 0 && refusedText.contains("404") && refusedText.contains("stampZoneIDs[1]"), "\(refusedText)")
        let (invalid, invalidText) = try await run(["hunt", "create"] + connection + ["--site", "1", "--name", "x", "--stamps", "a,b",
                                                    "--time-limit", "1", "--reward", "r"])
        #expect(invalid == 64 && invalidText.contains("--stamps"), "\(invalidText)")

        let (offered, offeredText) = try await run(["offers", "create"] + connection + ["--zone", "\(zones[0].id)", "--title", "Two for one", "--body", "Today only"])
        #expect(offered == 0 && offeredText.contains("on zone \(zones[0].id) of site \(site.id): Two for one"), "\(offeredText)")
        #expect(try await admin.get("/v1/offers?zone=\(zones[0].id)", as: [Offer].self).map(\.body) == ["Today only"])
        let (_, settings) = try await run(["offers", "settings"] + connection + ["--site", "\(site.id)", "--per-window", "2"])
        #expect(settings.contains("at most 2 offers per device per 600 s, up to 3 choices within 5.0 m"), "\(settings)")
        #expect(try await admin.get("/v1/offer-settings/\(site.id)", as: SiteOfferSettings.self).settings.perWindow == 2)
        let (badSettings, badSettingsText) = try await run(["offers", "settings"] + connection + ["--site", "\(site.id)", "--max-choices", "50"])
        #expect(badSettings != 0 && badSettingsText.contains("maxChoices"), "\(badSettingsText)")

        let registered = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, anonymous: true, consent: DeviceConsent(events: true, positions: true)),
                                              as: RegisteredDevice.self)
        let phone = ["--server", base.absoluteString, "--token", registered.token]
        let (_, received) = try await run(["offers", "received"] + phone + ["--device", registered.device.id])
        #expect(received.contains("delivered 0, refused by the rate limit 0"), "\(received)")
        let (_, progress) = try await run(["hunt", "progress"] + phone + ["--device", registered.device.id])
        #expect(progress.contains("no stamps collected yet"), "\(progress)")
        let (deleted, _) = try await run(["hunt", "delete"] + connection + ["--hunt", "\(huntID)"])
        #expect(deleted == 0)
        #expect(try await admin.get("/v1/hunts", as: [Hunt].self).isEmpty)
    }
}
