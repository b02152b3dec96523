import BeaconKit
@testable import BeaconServer
import BeaconTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `proxima help-request` on an HCI controller: BlueZ's emulator, where `proxima scan` on a
/// second emulated controller hears the help beacon the request names, until Ctrl-C cancels the
/// request and disables advertising.
@Suite(.serialized, .enabled(if: BTVirt.shouldRunTests, "needs btvirt (bluez-test-tools) and gcc; always runs on CI"))
struct HelpRequestEmulatorTests {
    @Test func theHelpBeaconIsOnTheAirWhileTheRequestIsOpen() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let directory = emulator.directory.path
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "help-hci", extra: ["--demo"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let site = try #require(try await admin.get("/v1/sites", as: [Site].self).first)
        let visitor = try await admin.send("POST", "/v1/devices", NewDevice(siteID: site.id, name: "Ann's phone", consent: DeviceConsent(events: true, positions: false)),
                                           as: RegisteredDevice.self)

        let asking = try ChildProcess.proxima(["help-request", "--server", base.absoluteString, "--token", visitor.token, "--name", "Ann",
                                               "--h4", emulator.leSocketPath])
        #expect(try await asking.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("advertising on") } != nil,
                "\(asking.standardOutput) \(asking.standardError)")
        let request = try #require(try await admin.get("/v1/help-requests?state=open", as: [HelpRequest].self).first)
        #expect(request.beacon.uuid == site.uuid && request.beacon.major == 999)

        let scan = try ChildProcess.proxima(["scan", "--h4", emulator.leSocketPath, "--json"])
        let heard = try await scan.waitForLine(timeout: .seconds(30)) { line in
            guard line.hasPrefix("{"), let sighting = try? JSONDecoder().decode(Sighting.self, from: Data(line.utf8)) else { return false }
            return sighting.frame.iBeacon?.identity == request.beacon.identity
        }
        #expect(heard != nil, "the scanner must hear major 999 minor \(request.beacon.minor): \(scan.standardOutput) \(scan.standardError)")
        scan.signal(SIGINT)
        _ = try await scan.waitForExit()

        asking.signal(SIGINT)
        #expect(try await asking.waitForExit(timeout: .seconds(30)) == 0, "\(asking.standardError)")
        #expect(asking.standardOutput.contains("SIGINT received: help request \(request.id) cancelled, advertising stopped"), "\(asking.standardOutput)")
        #expect(try await admin.get("/v1/help-requests/\(request.id)", as: HelpRequest.self).state == .cancelled)
    }
}
