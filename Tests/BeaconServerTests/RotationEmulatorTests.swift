import BeaconFleet
import BeaconKit
import BeaconRotation
@testable import BeaconServer
import BeaconTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A rotating beacon end to end on BlueZ's controller emulator: `proxima advertise
/// --rotation-key` on one emulated controller, `proxima scan` on another hears the rotated
/// identity, a gateway posts it to `proxima serve --secret-key-file` and it resolves to the
/// registered beacon; yesterday's identity posted today raises a `rotationReplay` alert.
@Suite(.serialized, .enabled(if: BTVirt.shouldRunTests, "needs btvirt (bluez-test-tools) and gcc; always runs on CI"))
struct RotationEmulatorTests {
    struct NewOrganisation: Encodable { var name: String; var proximityUUIDs: [UUID] }
    struct NewGateway: Encodable { var name: String; var siteID: Int }
    struct Registered: Decodable { var token: String }
    struct RotationBody: Encodable { var key: String; var period: String }

    static let uuid = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!
    static let keyHex = "8f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778"

    @Test func advertisedRotatedIdentityResolvesAndYesterdaysRaisesAnAlert() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let directory = emulator.directory.path
        let secretFile = directory + "/secret.key"
        try String(repeating: "3c", count: 32).write(toFile: secretFile, atomically: true, encoding: .utf8)
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "rotation-hci",
                                                            extra: ["--secret-key-file", secretFile])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let organisation = try await admin.send("POST", "/v1/organisations", NewOrganisation(name: "Rotating Ltd", proximityUUIDs: [Self.uuid]),
                                                as: Organisation.self)
        let site = try await admin.send("POST", "/v1/sites", NewSite(organisationID: organisation.id, name: "Vault"), as: Site.self)
        _ = try await admin.send("PUT", "/v1/categories/1", ["name": "Door"], as: Category.self)
        let beacon = try await admin.send("POST", "/v1/beacons",
                                          NewBeacon(siteID: site.id, category: 1, label: "Front", position: Position(x: 0, y: 0), state: .deployed),
                                          as: Beacon.self)
        let settings = try await admin.send("PUT", "/v1/beacons/\(beacon.id)/rotation", RotationBody(key: Self.keyHex, period: "24h"),
                                            as: RotationSettings.self)
        #expect(settings.periodSeconds == 86_400)
        let gateway = APIClient(base: base, token: try await admin.send("POST", "/v1/gateways", NewGateway(name: "vault door", siteID: site.id),
                                                                        as: Registered.self).token)

        // The key travels in the environment, off the process list.
        let advertiser = try ChildProcess.proxima(["advertise", "--h4", emulator.leSocketPath, "--uuid", Self.uuid.uuidString],
                                                  environment: ["PROXIMA_ROTATION_KEY": Self.keyHex])
        defer { advertiser.signal(SIGINT) }
        #expect(try await advertiser.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("Rotating major and minor every 1d") } != nil,
                "\(advertiser.standardOutput) \(advertiser.standardError)")

        let scan = try ChildProcess.proxima(["scan", "--h4", emulator.leSocketPath, "--json"])
        var heard: Sighting?
        _ = try await scan.waitForLine(timeout: .seconds(30)) { line in
            guard line.hasPrefix("{"), let sighting = try? JSONDecoder().decode(Sighting.self, from: Data(line.utf8)),
                  sighting.frame.iBeacon?.identity.uuid == Self.uuid else { return false }
            heard = sighting
            return true
        }
        scan.signal(SIGINT)
        _ = try await scan.waitForExit()
        let sighting = try #require(heard, "the scanner must hear the rotating beacon: \(scan.standardOutput) \(scan.standardError)")
        let rotating = RotatingIdentity(uuid: Self.uuid, key: try RotationKey(parsing: Self.keyHex))
        let now = Date().timeIntervalSince1970
        let heardIdentity = try #require(sighting.frame.iBeacon?.identity)
        #expect([rotating.identity(at: now), rotating.identity(at: now - 60)].contains(heardIdentity),
                "the advertised major and minor are this period's HMAC")
        #expect(heardIdentity != beacon.identity)

        let reply = try await gateway.send("POST", "/v1/sightings", SightingBatch(sequence: 1, sightings: [sighting]), as: ProximaServer.IngestReply.self)
        #expect(reply.accepted == 1 && reply.events >= 1, "an enter event of the registered beacon")
        let resolved = try await admin.get("/v1/resolve?uuid=\(Self.uuid.uuidString)&major=\(heardIdentity.major)&minor=\(heardIdentity.minor)",
                                           as: ResolvedIdentity.self)
        #expect(resolved.rotation?.registered == beacon.identity)
        #expect(resolved.label.contains("Vault"))

        // Yesterday's identity, recorded then and replayed now. In the hour of grace after
        // midnight yesterday's still resolves, so the day before is the replay then.
        let period = rotating.period
        let current = period.number(at: now)
        let replayed = now - period.start(of: current) >= period.grace ? current - 1 : current - 2
        var replay = sighting
        replay.time = now
        replay.frame = .iBeacon(IBeaconFrame(identity: rotating.identity(forPeriod: replayed), measuredPower: MeasuredPower(-59)))
        _ = try await gateway.send("POST", "/v1/sightings", SightingBatch(sequence: 2, sightings: [replay]), as: ProximaServer.IngestReply.self)
        let alerts = try await admin.get("/v1/fleet/alerts", as: FleetAlertList.self).alerts.filter { $0.check == .rotationReplay }
        let alert = try #require(alerts.first, "yesterday's identity must raise an alert")
        #expect(alert.subject.name == "\(Self.uuid.uuidString):\(beacon.major):\(beacon.minor)")
        #expect(alert.reason.contains("period \(replayed)"))

        advertiser.signal(SIGINT)
        #expect(try await advertiser.waitForExit(timeout: .seconds(30)) == 0, "\(advertiser.standardError)")
    }
}
