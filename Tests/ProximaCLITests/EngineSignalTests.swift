import BeaconTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `proxima monitor` and `proxima range` stop cleanly on SIGINT and SIGTERM: the source is
/// stopped (a controller's scan disabled), the process says so and exits 0. Before, the default
/// action killed them with the controller still scanning.
@Suite(.serialized)
struct EngineSignalTests {
    static let retail = BTVirt.packageRoot.appendingPathComponent("examples/retail.json").path

    @Test(arguments: [("monitor", SIGINT), ("range", SIGTERM), ("monitor", SIGTERM)])
    func pacedSimulationStopsOnSignalWithStatusZero(command: String, signal: Int32) async throws {
        // Paced at 20x, the hour-long scenario would run for three minutes.
        let child = try ChildProcess.proxima([command, "--simulate", Self.retail, "--receiver", "Paris shopper 1",
                                              "--speed", "20"])
        #expect(try await child.waitForLine { !$0.isEmpty } != nil, "no output: \(child.standardError)")
        child.signal(signal)
        #expect(try await child.waitForExit() == 0, "\(child.standardError)")
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(child.standardError.contains("\(name) received: stopping the source"), "\(child.standardError)")
    }

    @Test(.enabled(if: BTVirt.shouldRunTests, "needs btvirt (bluez-test-tools) and gcc; always runs on CI"))
    func monitorOnAControllerDisablesItsScanAndExitsZero() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let advertiser = try ChildProcess.proxima(["advertise", "--h4", emulator.leSocketPath, "--uuid", uuid,
                                                   "--major", "3", "--minor", "4"])
        #expect(try await advertiser.waitForLine { $0.hasPrefix("Advertising iBeacon") } != nil, "\(advertiser.standardError)")
        let monitor = try ChildProcess.proxima(["monitor", "--h4", emulator.leSocketPath, "--region", uuid, "--no-stored-regions"],
                                               environment: ["PROXIMA_CONFIG_DIR": emulator.directory.path])
        #expect(try await monitor.waitForLine { $0.contains(" enter ") } != nil, "\(monitor.standardError)")
        monitor.signal(SIGINT)
        #expect(try await monitor.waitForExit() == 0, "\(monitor.standardError)")
        #expect(monitor.standardError.contains("SIGINT received: stopping the source"))
        #expect(!monitor.standardError.contains("could not stop"), "\(monitor.standardError)")

        advertiser.signal(SIGTERM)
        #expect(try await advertiser.waitForExit() == 0)
    }
}
