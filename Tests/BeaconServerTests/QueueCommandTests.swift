import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

/// `proxima queue` and `proxima checkin` against a real `proxima serve --demo`, with a phone
/// posting its own sightings through the API.
@Suite("proxima queue and proxima checkin")
struct QueueCommandTests {
    @Test func createsAQueueAndACheckinZoneAndPrintsWhatAPhoneDid() async throws {
        let directory = NSTemporaryDirectory() + "proxima-queue-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "queue-cli", extra: ["--demo"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let site = try #require(try await admin.get("/v1/sites", as: [Site].self).first)
        let zones = try await admin.get("/v1/sites/\(site.id)/zones", as: [Zone].self)
        try #require(zones.count >= 2)
        let (entry, service) = (zones[0], zones[1])
        let connection = ["--server", base.absoluteString, "--token", ProximaProcess.adminToken]

        func run(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
            let process = try ProximaProcess(arguments)
            let status = try await process.waitForExit(timeout: .seconds(30))
            return (status, process.outputText)
        }

        let created = try await run(["queue", "create"] + connection + ["--name", "Tills", "--entry-zone", "\(entry.id)",
                                                                        "--service-zone", "\(service.id)", "--abandon-after", "120"])
        #expect(created.status == 0, "\(created.output)")
        #expect(created.output.contains("'Tills' of site \(site.id): zone \(entry.id) → zone \(service.id), abandoned after 120 s unseen"), "\(created.output)")
        let queue = try #require(try await admin.get("/v1/queues?site=\(site.id)", as: [Queue].self).first)
        let zoneRule = try await run(["checkin", "zone", "\(entry.id)"] + connection + ["--dwell", "1", "--absence", "600"])
        #expect(zoneRule.status == 0 && zoneRule.output.contains("check in after 1 s inside"), "\(zoneRule.output)")

        // A phone is heard in the entry zone, then in the service zone 90 s later.
        let registered = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, anonymous: true, consent: DeviceConsent(events: true, positions: false)),
                                              as: RegisteredDevice.self)
        let phone = APIClient(base: base, token: registered.token)
        let now = Date().timeIntervalSince1970
        for (sequence, (zone, time)) in [(entry, now - 100), (entry, now - 98), (service, now - 10)].enumerated() {
            let identity = BeaconIdentity(uuid: site.uuid, major: site.major, minor: zone.minor)
            let sighting = Sighting(time: time, receiver: "phone", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: -60,
                                    frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59))))
            _ = try await phone.data("POST", "/v1/sightings", body: JSONEncoder().encode(SightingBatch(sequence: sequence + 1, sightings: [sighting])))
        }

        let shown = try await run(["queue", "show", "\(queue.id)"] + connection)
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.output.contains("now: 0 waiting"), "\(shown.output)")
        #expect(shown.output.contains("last 15 min: 1 served (wait p50 90 s, p90 90 s), 0 abandoned"), "\(shown.output)")
        let listed = try await run(["queue", "list"] + connection + ["--site", "\(site.id)"])
        #expect(listed.status == 0 && listed.output.contains("queue \(queue.id) 'Tills'"), "\(listed.output)")

        // The phone reads its own check-ins with its token.
        let checkins = try await run(["checkin", "show", registered.device.id, "--server", base.absoluteString, "--token", registered.token])
        #expect(checkins.status == 0, "\(checkins.output)")
        #expect(checkins.output.contains("zone \(entry.id): 1 check-in,"), "\(checkins.output)")

        // A refusal names the field; a bad option stops before any request.
        let refused = try await run(["queue", "create"] + connection + ["--name", "Bad", "--entry-zone", "\(entry.id)",
                                                                        "--service-zone", "\(service.id)", "--abandon-after", "5"])
        #expect(refused.status != 0 && refused.output.contains("422") && refused.output.contains("abandonAfter"), "\(refused.output)")
        let invalid = try await run(["queue", "show", "\(queue.id)"] + connection + ["--hours", "0"])
        #expect(invalid.status == 64 && invalid.output.contains("--hours"), "\(invalid.output)")
    }
}
