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
        #expect(try await register.waitForExit(timeout: .seconds(120)) == 0, "\(register.outputText)")
        #expect(register.outputText.contains("(anonymous), sharing events"), "\(register.outputText)")
        let tokenLine = try #require(register.outputText.split(separator: "\n").first { $0.hasPrefix("device token (shown once, store it now): ") })
        let deviceToken = String(tokenLine.split(separator: " ").last ?? "")

        let lookup = ["device", "message"] + connection + ["--token", deviceToken, "--uuid", site.uuid.uuidString,
                                                          "--major", "\(site.major)", "--minor", "\(zone.minor)"]
        let before = try ProximaProcess(lookup)
        #expect(try await before.waitForExit(timeout: .seconds(120)) == 0, "\(before.outputText)")
        #expect(before.outputText.contains("no message now"), "\(before.outputText)")

        let saved = try await admin.send("POST", "/v1/messages", NewDayMessage(zoneID: zone.id, body: "Two for one today"), as: SavedDayMessage.self)
        let after = try ProximaProcess(lookup)
        #expect(try await after.waitForExit(timeout: .seconds(120)) == 0, "\(after.outputText)")
        #expect(after.outputText.contains("\(zone.label): message \(saved.message.id) (text)\nTwo for one today"), "\(after.outputText)")

        // A refusal is reported with the server's field; a bad option before any request.
        let refused = try ProximaProcess(["device", "register"] + connection + ["--token", deviceToken, "--site", "\(site.id)",
                                          "--name", "x", "--consent", "events"])
        #expect(try await refused.waitForExit(timeout: .seconds(120)) != 0)
        #expect(refused.outputText.contains("403") && refused.outputText.contains("Authorization"), "\(refused.outputText)")
        let invalid = try ProximaProcess(["device", "register"] + connection + ["--token", "x", "--site", "1", "--consent", "events"])
        #expect(try await invalid.waitForExit(timeout: .seconds(120)) == 64)
        #expect(invalid.outputText.contains("--name"), "\(invalid.outputText)")
    }

    /// The operator's commands: messages added with a schedule, listed, shown and removed;
    /// devices listed, shown and deleted. Refusals carry the server's field or the option.
    @Test func managesMessagesAndDevices() async throws {
        let directory = NSTemporaryDirectory() + "proxima-messages-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "messages", extra: ["--demo"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let site = try #require(try await admin.get("/v1/sites", as: [Site].self).first)
        let zone = try #require(try await admin.get("/v1/sites/\(site.id)/zones", as: [Zone].self).first)
        let operatorArguments = ["--server", base.absoluteString, "--token", ProximaProcess.adminToken]

        func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
            let process = try ProximaProcess(arguments)
            let status = try await process.waitForExit(timeout: .seconds(120))
            return (status, process.outputText)
        }

        let added = try await run(["messages", "add"] + operatorArguments + ["--zone", "\(zone.id)", "--html", "<p onclick=\"x()\">Quiz <b>tonight</b></p><script>x()</script>",
                                   "--days", "fri,sat", "--hours", "18:00-23:00", "--time-zone", "Europe/London"])
        #expect(added.status == 0, "\(added.output)")
        let stored = try await admin.get("/v1/messages?zone=\(zone.id)", as: [DayMessage].self)
        let message = try #require(stored.first)
        #expect(stored.count == 1 && message.schedule.days == [.fri, .sat] && message.schedule.timeZone == "Europe/London"
                && message.schedule.timeOfDay == .init(start: "18:00", end: "23:00"))
        #expect(!message.body.contains("script") && !message.body.contains("onclick") && message.body.contains("<b>tonight</b>"), "\(message.body)")
        #expect(added.output.contains("message \(message.id) added: site \(site.id) zone \(zone.id)  fri,sat 18:00-23:00 Europe/London  html:"), "\(added.output)")
        #expect(added.output.contains("sanitising removed:"), "\(added.output)")

        let listed = try await run(["messages", "list"] + operatorArguments + ["--site", "\(site.id)"])
        #expect(listed.status == 0 && listed.output.contains("\(message.id)  site \(site.id) zone \(zone.id)"), "\(listed.output)")
        let shown = try await run(["messages", "show"] + operatorArguments + ["\(message.id)"])
        #expect(shown.status == 0 && shown.output.hasSuffix(message.body + "\n"), "\(shown.output)")

        // The server's refusal names the field; the command's own checks name the option.
        let badZone = try await run(["messages", "add"] + operatorArguments + ["--zone", "999999", "--text", "x"])
        #expect(badZone.status != 0 && badZone.output.contains("zoneID"), "\(badZone.output)")
        let badDay = try await run(["messages", "add"] + operatorArguments + ["--zone", "\(zone.id)", "--text", "x", "--days", "mon,funday"])
        #expect(badDay.status == 64 && badDay.output.contains("--days") && badDay.output.contains("funday"), "\(badDay.output)")
        let badZoneName = try await run(["messages", "add"] + operatorArguments + ["--zone", "\(zone.id)", "--text", "x", "--time-zone", "Mars/Olympus"])
        #expect(badZoneName.status != 0 && badZoneName.output.contains("schedule.timeZone"), "\(badZoneName.output)")

        let removed = try await run(["messages", "remove"] + operatorArguments + ["\(message.id)"])
        #expect(removed.status == 0 && removed.output.contains("message \(message.id) removed"), "\(removed.output)")
        #expect(try await admin.get("/v1/messages?zone=\(zone.id)", as: [DayMessage].self).isEmpty)

        let registered = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, name: "Ann's phone", anonymous: false,
                                                                             consent: DeviceConsent(events: true, positions: false)),
                                              as: RegisteredDevice.self)
        let device = registered.device
        let devices = try await run(["device", "list"] + operatorArguments + ["--site", "\(site.id)"])
        #expect(devices.status == 0 && devices.output.contains("\(device.id)  site \(site.id)  'Ann's phone'  shares events"), "\(devices.output)")
        let own = try await run(["device", "show", "--server", base.absoluteString, "--token", registered.token, device.id])
        #expect(own.status == 0 && own.output.hasPrefix(device.id), "\(own.output)")
        // A device may not list the site's devices.
        let listedByDevice = try await run(["device", "list", "--server", base.absoluteString, "--token", registered.token])
        #expect(listedByDevice.status != 0 && listedByDevice.output.contains("403"), "\(listedByDevice.output)")
        let badID = try await run(["device", "delete"] + operatorArguments + ["../sites/1"])
        #expect(badID.status == 64 && badID.output.contains("expected a device id"), "\(badID.output)")
        let deleted = try await run(["device", "delete"] + operatorArguments + [device.id])
        #expect(deleted.status == 0 && deleted.output.contains("device \(device.id) deleted"), "\(deleted.output)")
        let empty = try await run(["device", "list"] + operatorArguments)
        #expect(empty.status == 0 && empty.output == "no devices\n", "\(empty.output)")
    }
}
