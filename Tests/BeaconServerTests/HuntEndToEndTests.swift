import AsyncHTTPClient
import BeaconGateway
import BeaconKit
@testable import BeaconServer
import BeaconSimulator
import Foundation
import Hummingbird
import NIOCore
import Synchronization
import Testing

/// examples/treasure-hunt.json end to end: the simulator's phones → `proxima gateway` (one
/// device token per phone) → a proxy that loses some answers after the server committed the
/// batch, so the gateway sends those batches again → `proxima serve` → the hunt's API.
@Suite("Treasure hunt end to end")
struct HuntEndToEndTests {
    static let honest = ["visitor-a", "visitor-b", "visitor-c", "visitor-d"]

    @Test func honestFinishersAreRewardedOnceAndTheSpooferIsRefusedWithTheReason() async throws {
        let directory = NSTemporaryDirectory() + "proxima-hunt-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scenarioPath = try Self.examplePath("treasure-hunt.json")
        let scenario = try Scenario.load(contentsOf: URL(fileURLWithPath: scenarioPath))

        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "hunt-e2e",
                                                            extra: ["--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        struct NewOrganisation: Encodable { var name: String; var proximityUUIDs: [UUID] }
        let uuid = try #require(scenario.beacons.first?.identity.uuid)
        let organisation = try await admin.send("POST", "/v1/organisations", NewOrganisation(name: "Show Inc", proximityUUIDs: [uuid]), as: Organisation.self)
        let site = try await admin.send("POST", "/v1/sites", NewSite(organisationID: organisation.id, name: "Show floor"), as: Site.self)
        // The registry holds the nine stamps where the scenario put them (not the spoofer's clones).
        let stamps = scenario.registeredBeacons.sorted { $0.identity.minor < $1.identity.minor }
        #expect(stamps.count == 9)
        _ = try await admin.send("POST", "/v1/sites/\(site.id)/plan", stamps.map {
            PlannedPosition(category: 1, label: $0.name, x: $0.position.x, y: $0.position.y)
        }, as: [TransmitterConfiguration].self)
        let zones = try await admin.get("/v1/sites/\(site.id)/zones", as: [Zone].self)
        #expect(zones.map(\.minor) == stamps.map(\.identity.minor), "the plan numbers the stamps' zones as the scenario does")
        let hunt = try await admin.send("POST", "/v1/hunts", NewHunt(siteID: site.id, name: "Show floor stamps", stampZoneIDs: zones.map(\.id),
                                                                    timeLimit: 900, reward: "A T-shirt at the info desk"), as: Hunt.self)

        // Every stamp has an offer; a site limit of 3 offers per device per 10 minutes.
        for zone in zones {
            _ = try await admin.send("POST", "/v1/offers", NewOffer(zoneID: zone.id, title: "\(zone.label) deal", body: "Show this at \(zone.label)"), as: Offer.self)
        }
        _ = try await admin.send("PUT", "/v1/offer-settings/\(site.id)", OfferSettings(perWindow: 3, window: 600, reach: 5, maxChoices: 3, freshness: 10),
                                 as: SiteOfferSettings.self)

        // visitor-a shares positions too, so it is made offers; the others share events only.
        var tokens: [String: RegisteredDevice] = [:]
        for receiver in scenario.receivers {
            let consent = DeviceConsent(events: true, positions: receiver.name == "visitor-a")
            tokens[receiver.name] = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, name: receiver.name, consent: consent),
                                                         as: RegisteredDevice.self)
        }

        let receiverTokens = tokens.sorted { $0.key < $1.key }.flatMap { ["--receiver-token", "\($0.key)=\($0.value.token)"] }
        let proxy = AnswerLosingProxy(target: base, loseEvery: 8)
        try await proxy.run { proxyBase in
            let gateway = try ProximaProcess(["gateway", "--server", proxyBase.absoluteString, "--simulate", scenarioPath, "--speed", "0", "--batch", "500"]
                                             + receiverTokens)
            #expect(try await gateway.waitForExit(timeout: .seconds(600)) == 0, "\(gateway.outputText)")
        }
        // By the batches themselves, not by counts: on a loaded machine a slow answer also makes
        // the gateway send a batch again (its own timeout), which is rightly a duplicate too.
        let batches = proxy.batches
        #expect(!batches.lost.isEmpty, "the proxy lost some answers")
        #expect(batches.lost.isSubset(of: batches.duplicates),
                "every batch whose answer was lost came back and was recognised as a duplicate (\(batches.lost.count) lost, \(batches.lost.subtracting(batches.duplicates).count) never recognised)")
        #expect(batches.duplicates.isSubset(of: batches.taken), "only batches the server had taken are called duplicates")

        let runs = Dictionary(uniqueKeysWithValues: try await admin.get("/v1/hunts/\(hunt.id)/runs?limit=100", as: [HuntRun].self).map { ($0.name ?? "", $0) })
        for name in Self.honest {
            let run = try #require(runs[name], "\(name) has no run")
            #expect(run.status == .finished, "\(name): \(run.status) \(run.reason ?? "")")
            #expect(run.reward == "A T-shirt at the info desk")
            #expect(Set(run.stamps.map(\.number)) == Set(1...9) && run.stamps.count == 9, "\(name) collected each stamp once: \(run.stamps.map(\.number))")
            let duration = try #require(run.duration)
            #expect(duration > 0 && duration <= 900)
        }
        #expect(runs["straggler"]?.status == .collecting && runs["straggler"]?.reward == nil, "three stamps and no reward")
        #expect(runs["slowpoke"]?.status == .expired, "\(String(describing: runs["slowpoke"]))")
        #expect(runs["slowpoke"]?.reason?.hasPrefix("time limit of 900 s passed") == true, "\(runs["slowpoke"]?.reason ?? "")")

        // The spoofer's clones appeared one every 2 s in stamp order; stamps 1 and 2 are 45 m apart.
        let spoofer = try #require(runs["spoofer"])
        #expect(spoofer.status == .refused && spoofer.reward == nil)
        let reason = try #require(spoofer.reason)
        let pattern = /stamps 1→2 in ([0-9.]+) s, 45 m apart/
        let match = try #require(reason.firstMatch(of: pattern), "\(reason)")
        // The gap is on the phone's clock, which the simulation sets, so the machine's load does
        // not enter it: it is the gap between the spoofer's enters as the server stored them, and
        // each enter comes at or after the moment the scenario switched that clone on.
        let firstStamp = try #require(spoofer.stamps.first)
        #expect(firstStamp.number == 1 && spoofer.stamps.count == 1, "\(spoofer.stamps)")
        let spooferDevice = try #require(tokens["spoofer"])
        let spooferEvents = try await admin.get("/v1/devices/\(spooferDevice.device.id)/events?format=json&limit=1000", as: [StoredEvent].self)
        let secondEnter = try #require(spooferEvents.first {
            $0.kindName == "enter" && $0.event?.region.minor == stamps[1].identity.minor && $0.time >= firstStamp.time
        }, "no enter at stamp 2 after stamp 1 among \(spooferEvents.map { "\($0.kindName) \($0.label) \($0.time)" })")
        #expect(String(match.1) == HuntRules.number(secondEnter.time - firstStamp.time),
                "the reason's gap is the stored enters' gap, \(secondEnter.time - firstStamp.time) s: \(reason)")
        func switchedOn(_ stamp: SimulatedBeacon) -> Double? {
            scenario.faults.lazy.compactMap { fault -> Double? in
                guard case .clone(let original, _, let at) = fault.kind, scenario.beacons[original].identity == stamp.identity else { return nil }
                return at
            }.first
        }
        let firstOn = try #require(switchedOn(stamps[0]))
        let secondOn = try #require(switchedOn(stamps[1]))
        #expect(secondOn - firstOn == 2, "the scenario switches the clones on 2 s apart")
        #expect(firstStamp.time >= firstOn && secondEnter.time >= secondOn,
                "stamp 1 at \(firstStamp.time) s (clone on at \(firstOn) s), stamp 2 at \(secondEnter.time) s (clone on at \(secondOn) s)")

        let board = try await admin.get("/v1/hunts/\(hunt.id)/leaderboard", as: HuntLeaderboard.self)
        // The figures docs/apps.md quotes.
        print("treasure hunt: \(batches.lost.count) answers lost and batches resent; finishers \(board.leaders.map { "\($0.name ?? "?") \(Int($0.duration.rounded())) s" }); spoofer: \(reason)")
        #expect(Set(board.leaders.compactMap(\.name)) == Set(Self.honest), "\(board.leaders)")
        #expect(board.leaders.map(\.duration) == board.leaders.map(\.duration).sorted())
        #expect(board.counts == ["finished": 4, "collecting": 1, "expired": 1, "refused": 1])

        // visitor-a stood at nine stamps within 10 minutes: three offers, the rest held back and
        // counted; each offer a choice of the stamps within 5 m (the stamps are 20 m or more apart).
        let visitorA = try #require(tokens["visitor-a"])
        let offers = try await APIClient(base: base, token: visitorA.token).get("/v1/devices/\(visitorA.device.id)/offers", as: DeviceOffers.self)
        #expect(offers.delivered == 3 && offers.deliveries.count == 3, "\(offers)")
        #expect(offers.refused >= 6, "at least the six other stamps were held back: \(offers.refused)")
        #expect(offers.deliveries.allSatisfy { $0.choices.count == 1 && $0.choices[0].accuracy <= 5 })
        for name in Self.honest.dropFirst() {
            let other = try #require(tokens[name])
            #expect(try await admin.get("/v1/devices/\(other.device.id)/offers", as: DeviceOffers.self).delivered == 0, "\(name) shares events only")
        }
        print("treasure hunt offers to visitor-a: delivered \(offers.delivered), refused \(offers.refused); choices \(offers.deliveries.map { $0.choices.map(\.label) })")

        // The same through `proxima hunt`.
        let runsCommand = try ProximaProcess(["hunt", "runs", "--server", base.absoluteString, "--token", ProximaProcess.adminToken, "--hunt", "\(hunt.id)", "--status", "refused"])
        #expect(try await runsCommand.waitForExit(timeout: .seconds(30)) == 0)
        #expect(runsCommand.outputText.contains("spoofer: refused, 1 stamps (1); \(reason)"), "\(runsCommand.outputText)")
        let boardCommand = try ProximaProcess(["hunt", "leaderboard", "--server", base.absoluteString, "--token", ProximaProcess.adminToken, "--hunt", "\(hunt.id)"])
        #expect(try await boardCommand.waitForExit(timeout: .seconds(30)) == 0)
        #expect(boardCommand.outputText.hasPrefix("1. \(board.leaders[0].name ?? "")"), "\(boardCommand.outputText)")

        // Each phone reads its own run only.
        let phone = APIClient(base: base, token: try #require(tokens["visitor-a"]).token)
        let own = try await phone.get("/v1/devices/\(try #require(tokens["visitor-a"]).device.id)/hunts", as: [HuntRun].self)
        #expect(own.map(\.status) == [.finished])
        await #expect(throws: APIClient.Failure.self) {
            _ = try await phone.get("/v1/devices/\(try #require(tokens["spoofer"]).device.id)/hunts", as: [HuntRun].self)
        }
    }

    static func examplePath(_ name: String) throws -> String {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("examples/\(name)").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile)
    }
}

/// Forwards `POST /v1/sightings` to a server and, for every `loseEvery`-th batch the server took,
/// answers 503 instead of the server's answer, as if the answer was lost on the way back: the
/// gateway sends the same batch (same sequence, the same bytes) again.
final class AnswerLosingProxy: Sendable {
    let target: URL
    let loseEvery: Int
    /// Request bodies: those the server took as new, those whose answer was lost, and those it
    /// answered as duplicates.
    struct Batches: Sendable {
        var posts = 0
        var taken: Set<[UInt8]> = []
        var lost: Set<[UInt8]> = []
        var duplicates: Set<[UInt8]> = []
    }
    private let seen = Mutex(Batches())

    init(target: URL, loseEvery: Int) {
        self.target = target
        self.loseEvery = loseEvery
    }

    var batches: Batches { seen.withLock { $0 } }

    func run(_ body: @Sendable (URL) async throws -> Void) async throws {
        let router = Router()
        router.post("/v1/sightings") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 8 * 1024 * 1024)
            var forwarded = HTTPClientRequest(url: self.target.absoluteString + "/v1/sightings")
            forwarded.method = .POST
            // The gateway posts compact binary batches by default; the type goes through as sent.
            forwarded.headers.add(name: "Content-Type", value: request.headers[.contentType] ?? "application/json")
            forwarded.headers.add(name: "Authorization", value: request.headers[.authorization] ?? "")
            forwarded.body = .bytes(bytes)
            let answer = try await HTTPClient.shared.execute(forwarded, timeout: .seconds(60))
            let text = try await answer.body.collect(upTo: 16 * 1024 * 1024)
            let status = Int(answer.status.code)
            let batch = Array(buffer: bytes)
            let lose = self.seen.withLock { seen -> Bool in
                guard (200..<300).contains(status) else { return false }
                if String(buffer: text).contains("\"duplicate\":true") { seen.duplicates.insert(batch) } else { seen.taken.insert(batch) }
                seen.posts += 1
                guard seen.posts % self.loseEvery == 0 else { return false }
                seen.lost.insert(batch)
                return true
            }
            if lose { return Response(status: .serviceUnavailable) }
            return Response(status: .init(code: status), headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: text))
        }
        let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            try await body(URL(string: "http://127.0.0.1:\(try #require(client.port))")!)
        }
    }
}
