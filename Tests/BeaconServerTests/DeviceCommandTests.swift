@testable import BeaconServer
import Foundation
import Testing

/// `proxima device register` and `proxima device message` against a real `proxima serve --demo`.
@Suite("proxima device")
struct DeviceCommandTests {
    @Test func registersADeviceAndLooksUpItsMessage() async throws {
        let directory = NSTemporaryDirectory() + "proxima-device-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "device", extra: ["--demo"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let site = try #require(try await admin.get("/v1/sites", as: [Site].self).first)
        let zone = try #require(try await admin.get("/v1/sites/\(site.id)/zones", as: [Zone].self).first)
        let connection = ["--server", base.absoluteString]

        let register = try ProximaProcess(["device", "register"] + connection + ["--token", ProximaProcess.adminToken,
                                           "--site", "\(site.id)", "--anonymous", "--consent", "events"])
        #expect(try await register.waitForExit(timeout: .seconds(30)) == 0, "\(register.outputText)")
        #expect(register.outputText.contains("(anonymous), sharing events"), "\(register.outputText)")
        let tokenLine = try #require(register.outputText.split(separator: "\n").first { $0.hasPrefix("device token (shown once, store it now): ") })
        let deviceToken = String(tokenLine.split(separator: " ").last ?? "")

        let lookup = ["device", "message"] + connection + ["--token", deviceToken, "--uuid", site.uuid.uuidString,
                                                          "--major", "\(site.major)", "--minor", "\(zone.minor)"]
        let before = try ProximaProcess(lookup)
        #expect(try await before.waitForExit(timeout: .seconds(30)) == 0, "\(before.outputText)")
        #expect(before.outputText.contains("no message now"), "\(before.outputText)")

        let saved = try await admin.send("POST", "/v1/messages", NewDayMessage(zoneID: zone.id, body: "Two for one today"), as: SavedDayMessage.self)
        let after = try ProximaProcess(lookup)
        #expect(try await after.waitForExit(timeout: .seconds(30)) == 0, "\(after.outputText)")
        #expect(after.outputText.contains("\(zone.label): message \(saved.message.id) (text)\nTwo for one today"), "\(after.outputText)")

        // A refusal is reported with the server's field; a bad option before any request.
        let refused = try ProximaProcess(["device", "register"] + connection + ["--token", deviceToken, "--site", "\(site.id)",
                                          "--name", "x", "--consent", "events"])
        #expect(try await refused.waitForExit(timeout: .seconds(30)) != 0)
        #expect(refused.outputText.contains("403") && refused.outputText.contains("Authorization"), "\(refused.outputText)")
        let invalid = try ProximaProcess(["device", "register"] + connection + ["--token", "x", "--site", "1", "--consent", "events"])
        #expect(try await invalid.waitForExit(timeout: .seconds(30)) == 64)
        #expect(invalid.outputText.contains("--name"), "\(invalid.outputText)")
    }
}
