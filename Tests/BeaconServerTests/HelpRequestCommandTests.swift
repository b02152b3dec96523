@testable import BeaconServer
import Foundation
import Testing

/// `proxima help-request` against a real `proxima serve --demo`: Ctrl-C cancels the request and
/// switches the (simulated) transmitter off; a helper that is not one is refused with the field.
@Suite("proxima help-request")
struct HelpRequestCommandTests {
    @Test func ctrlCCancelsTheRequestAndStopsAdvertising() async throws {
        let directory = NSTemporaryDirectory() + "proxima-help-command-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "help", extra: ["--demo"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let site = try #require(try await admin.get("/v1/sites", as: [Site].self).first)
        let visitor = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, anonymous: true, consent: DeviceConsent(events: true, positions: false)),
                                           as: RegisteredDevice.self)
        let transmitter = directory + "/phone.json"

        let asking = try ProximaProcess(["help-request", "--server", base.absoluteString, "--token", visitor.token, "--simulated-transmitter", transmitter])
        _ = try await HelpRequestEndToEndTests.waitFor("advertising on the simulator", in: asking, timeout: .seconds(30))
        #expect(FileManager.default.fileExists(atPath: transmitter))
        let open = try await admin.get("/v1/help-requests?state=open", as: [HelpRequest].self)
        #expect(open.count == 1 && open.first?.deviceID == visitor.device.id && open.first?.name == nil)

        // A phone that is not a helper cannot acknowledge it: the refusal names the field.
        let stranger = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, name: "Cy", consent: DeviceConsent(events: true, positions: false)),
                                            as: RegisteredDevice.self)
        let refused = try ProximaProcess(["help-request", "--helper", "\(open.first?.id ?? 0)", "--server", base.absoluteString, "--token", stranger.token])
        #expect(try await refused.waitForExit(timeout: .seconds(120)) != 0)
        #expect(refused.outputText.contains("403") && refused.outputText.contains(#""field":"id""#), "\(refused.outputText)")

        asking.process.interrupt()
        #expect(try await asking.waitForExit(timeout: .seconds(120)) == 0, "\(asking.outputText)")
        #expect(asking.outputText.contains("SIGINT received: help request \(open.first?.id ?? 0) cancelled, advertising stopped"), "\(asking.outputText)")
        #expect(!FileManager.default.fileExists(atPath: transmitter))
        let cancelled = try await admin.get("/v1/help-requests/\(open.first?.id ?? 0)", as: HelpRequest.self)
        #expect(cancelled.state == .cancelled)

        // Options that cannot go together are refused before any request.
        let invalid = try ProximaProcess(["help-request", "--server", base.absoluteString, "--token", "x", "--helper", "1", "--name", "Ann"])
        #expect(try await invalid.waitForExit(timeout: .seconds(120)) == 64)
        #expect(invalid.outputText.contains("--name"), "\(invalid.outputText)")
    }
}
