import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

/// Whole processes: a phone registered as a device posts its own sightings with
/// `proxima gateway --token <device token>` to `proxima serve`, and reads its enter events back
/// with the message of the day where one applies.
@Suite("Devices end to end")
struct DeviceEndToEndTests {
    @Test func aDeviceTokenDrivesProximaGatewayAndItsEnterCarriesTheMessage() async throws {
        let directory = NSTemporaryDirectory() + "proxima-device-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scenarioPath = directory + "/corridor.json"
        try EndToEndTests.scenarioJSON.write(toFile: scenarioPath, atomically: true, encoding: .utf8)

        // The simulation's clock starts in 1970; messages are scheduled on the server's clock (now).
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "device-e2e",
                                                            extra: ["--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        struct NewOrganisation: Encodable { var name: String; var proximityUUIDs: [UUID] }
        let organisation = try await admin.send("POST", "/v1/organisations", NewOrganisation(name: "Corridor Inc", proximityUUIDs: [EndToEndTests.uuid]), as: Organisation.self)
        let site = try await admin.send("POST", "/v1/sites", NewSite(organisationID: organisation.id, name: "Corridor"), as: Site.self)
        _ = try await admin.send("POST", "/v1/sites/\(site.id)/plan", [
            PlannedPosition(category: 1, label: "West", x: 0, y: 0), PlannedPosition(category: 1, label: "East", x: 0, y: 0),
        ], as: [TransmitterConfiguration].self)
        let zones = try await admin.get("/v1/sites/\(site.id)/zones", as: [Zone].self)
        let west = try #require(zones.first { $0.label == "West" })
        let east = try #require(zones.first { $0.label == "East" })
        let welcome = try await admin.send("POST", "/v1/messages", NewDayMessage(zoneID: west.id, format: .html, body: "<p>Welcome <b>west</b></p>"),
                                           as: SavedDayMessage.self)
        // East's message ran in 2000 only.
        _ = try await admin.send("POST", "/v1/messages", NewDayMessage(zoneID: east.id, body: "Old news", schedule: MessageSchedule(from: "2000-01-01", to: "2000-01-02")),
                                 as: SavedDayMessage.self)
        let registered = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, anonymous: true, consent: DeviceConsent(events: true, positions: false)),
                                              as: RegisteredDevice.self)

        let gateway = try ProximaProcess(["gateway", "--server", base.absoluteString, "--token", registered.token,
                                          "--simulate", scenarioPath, "--speed", "0", "--batch", "500", "--interval", "0.2"])
        #expect(try await gateway.waitForExit(timeout: .seconds(120)) == 0, "\(gateway.outputText)")

        let phone = APIClient(base: base, token: registered.token)
        let events = try await phone.get("/v1/devices/\(registered.device.id)/events?format=json", as: [StoredEvent].self)
        let enters = events.filter { $0.kindName == "enter" }
        #expect(enters.map { $0.event?.region.minor } == [1001, 1002], "\(events.map(\.kindName))")
        #expect(enters.first?.message == welcome.message.delivered)
        #expect(enters.last.map { $0.message == nil } == true)
        #expect(events.allSatisfy { $0.gatewayID == registered.device.id })
        // The device's token reads nothing else.
        await #expect(throws: APIClient.Failure.self) { _ = try await phone.get("/v1/events?format=json", as: [StoredEvent].self) }
    }
}
