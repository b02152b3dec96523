import BeaconKit
import BeaconTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `proxima advertise` and `proxima scan` against BlueZ's controller emulator: two emulated
/// controllers sharing one air. btvirt reports each advertiser once when scanning or
/// advertising is enabled (RSSI 127), so the tests wait for those reports, not for repeats.
@Suite(.serialized, .enabled(if: BTVirt.shouldRunTests, "needs btvirt (bluez-test-tools) and gcc; always runs on CI"))
struct EmulatorEndToEndTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func sightings(_ lines: [String]) throws -> [Sighting] {
        try lines.filter { $0.hasPrefix("{") }.map { try JSONDecoder().decode(Sighting.self, from: Data($0.utf8)) }
    }

    @Test func advertiseThenScanReportsExactIdentityAndPowerAndFollowsARestart() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let work = emulator.directory
        let btsnoop = work.appendingPathComponent("scan.btsnoop").path
        let pcap = work.appendingPathComponent("scan.pcap").path

        let advertiserCapture = work.appendingPathComponent("advertiser.btsnoop").path
        let first = try ChildProcess.proxima(["advertise", "--h4", emulator.leSocketPath, "--uuid", Self.uuid,
                                              "--major", "7", "--minor", "42", "--power", "-61", "--record", advertiserCapture])
        #expect(try await first.waitForLine { $0.hasPrefix("Advertising iBeacon") } != nil, "advertiser: \(first.standardError)")
        #expect(first.standardOutput.contains("LE Set Advertising Parameters: non-connectable (ADV_NONCONN_IND), every 100 ms"))

        let scan = try ChildProcess.proxima(["scan", "--h4", emulator.leSocketPath, "--json",
                                             "--record", btsnoop, "--record", pcap])
        let firstLine = try await scan.waitForLine { $0.hasPrefix("{") }
        #expect(firstLine != nil, "scanner: \(scan.standardError)")
        let heard = try #require(try Self.sightings(scan.outputLines).first)
        let frame = try #require(heard.frame.iBeacon)
        #expect(frame.identity == BeaconIdentity(uuid: UUID(uuidString: Self.uuid)!, major: 7, minor: 42))
        #expect(frame.measuredPower == MeasuredPower(-61))
        #expect(heard.rssi == nil, "btvirt reports RSSI 127, not available")

        first.signal(SIGINT)
        #expect(try await first.waitForExit() == 0)
        #expect(first.standardOutput.contains("SIGINT received: LE Set Advertising Enable: off"))
        #expect(first.standardOutput.contains("Advertising stopped."))
        // The advertiser's own recording ends with advertising disabled, and the emulator agreed.
        let advertiserLog = try ChildProcess(URL(fileURLWithPath: "/usr/bin/btmon"), ["-r", advertiserCapture])
        #expect(try await advertiserLog.waitForExit() == 0)
        let tail = advertiserLog.standardOutput.components(separatedBy: "< HCI Command:").last ?? ""
        #expect(tail.contains("LE Set Advertise Enable (0x08|0x000a) plen 1"), "\(tail)")
        #expect(tail.contains("Advertising: Disabled (0x00)"), "\(tail)")
        #expect(tail.contains("Status: Success (0x00)"), "\(tail)")

        let second = try ChildProcess.proxima(["advertise", "--h4", emulator.leSocketPath, "--uuid", Self.uuid,
                                               "--major", "8", "--minor", "42", "--power", "-61"])
        let restarted = try await scan.waitForLine { line in
            (try? Self.sightings([line]).first?.frame.iBeacon?.identity.major) == 8
        }
        #expect(restarted != nil, "the scan must report the restarted advertiser's new major")
        second.signal(SIGTERM)
        #expect(try await second.waitForExit() == 0)

        scan.signal(SIGINT)
        #expect(try await scan.waitForExit() == 0, "SIGINT disables the scan and exits 0: \(scan.standardError)")
        let live = try Self.sightings(scan.outputLines)
        #expect(live.compactMap { $0.frame.iBeacon?.identity.major } == [7, 8])

        // btmon, BlueZ's own decoder, reads the recording and recognises the iBeacon.
        let btmon = try ChildProcess(URL(fileURLWithPath: "/usr/bin/btmon"), ["-r", btsnoop])
        #expect(try await btmon.waitForExit() == 0)
        #expect(btmon.standardOutput.contains("LE Advertising Report (0x02)"))
        #expect(btmon.standardOutput.contains("Type: iBeacon (2)"))
        #expect(btmon.standardOutput.contains("TX power: -61 dB"))
        #expect(btmon.standardOutput.contains("LE Set Scan Enable (0x08|0x000c) plen 2"))

        // Wireshark's decoder reads the pcap (link type 201) and finds the report and its RSSI.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") || BTVirt.isCI {
            let tshark = try ChildProcess(URL(fileURLWithPath: "/usr/bin/tshark"), ["-r", pcap, "-V"])
            #expect(try await tshark.waitForExit() == 0, "\(tshark.standardError)")
            #expect(tshark.standardOutput.contains("Sub Event: LE Advertising Report (0x02)"))
            #expect(tshark.standardOutput.contains("Company ID: Apple, Inc. (0x004c)"))
            #expect(tshark.standardOutput.contains("RSSI: 127 dBm"))
        }

        // Replays of both recordings give the live sightings again, byte for byte and
        // microsecond for microsecond; only the receiver name differs.
        for file in [btsnoop, pcap] {
            let replay = try ChildProcess.proxima(["scan", "--replay", file, "--speed", "0", "--json"])
            #expect(try await replay.waitForExit() == 0, "\(replay.standardError)")
            let replayed = try Self.sightings(replay.outputLines).map { sighting in
                var copy = sighting
                copy.receiver = live.first?.receiver ?? ""
                return copy
            }
            #expect(replayed == live, "replay of \(file)")
        }
    }

    @Test func savedTransmitterIsAdvertisedByName() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let environment = ["PROXIMA_CONFIG_DIR": emulator.directory.appendingPathComponent("config").path]
        let add = try ChildProcess.proxima(["transmitters", "add", "--name", "front-door", "--uuid", Self.uuid,
                                            "--major", "300", "--minor", "4", "--power", "-70"], environment: environment)
        #expect(try await add.waitForExit() == 0)
        let advertiser = try ChildProcess.proxima(["advertise", "--config", "front-door", "--h4", emulator.leSocketPath],
                                                  environment: environment)
        #expect(try await advertiser.waitForLine { $0.hasPrefix("Advertising iBeacon") } != nil, "\(advertiser.standardError)")
        let scan = try ChildProcess.proxima(["scan", "--h4", emulator.leSocketPath, "--json", "--region", "\(Self.uuid):300"])
        #expect(try await scan.waitForLine { $0.hasPrefix("{") } != nil, "\(scan.standardError)")
        let heard = try #require(try Self.sightings(scan.outputLines).first?.frame.iBeacon)
        #expect(heard == IBeaconFrame(identity: BeaconIdentity(uuid: UUID(uuidString: Self.uuid)!, major: 300, minor: 4),
                                      measuredPower: MeasuredPower(-70)))
        scan.signal(SIGINT)
        advertiser.signal(SIGTERM)
        #expect(try await scan.waitForExit() == 0)
        #expect(try await advertiser.waitForExit() == 0)
    }

    @Test func regionFilterHidesOtherBeacons() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let inside = try ChildProcess.proxima(["advertise", "--h4", emulator.leSocketPath, "--uuid", Self.uuid,
                                               "--major", "1", "--minor", "1"])
        let outside = try ChildProcess.proxima(["advertise", "--h4", emulator.leSocketPath, "--uuid", Self.uuid,
                                                "--major", "2", "--minor", "1"])
        #expect(try await inside.waitForLine { $0.hasPrefix("Advertising") } != nil)
        #expect(try await outside.waitForLine { $0.hasPrefix("Advertising") } != nil)
        let filtered = try ChildProcess.proxima(["scan", "--h4", emulator.leSocketPath, "--json", "--region", "\(Self.uuid):1:1"])
        let unfiltered = try ChildProcess.proxima(["scan", "--h4", emulator.leSocketPath, "--json"])
        // The unfiltered scan is the control: once it heard both, the filtered one heard them too.
        try await waitUntil { (try? Self.sightings(unfiltered.outputLines).count) == 2 }
        #expect(try Self.sightings(unfiltered.outputLines).count == 2)
        try await waitUntil { !filtered.outputLines.isEmpty }
        for child in [filtered, unfiltered] { child.signal(SIGINT) }
        #expect(try await filtered.waitForExit() == 0)
        #expect(try await unfiltered.waitForExit() == 0)
        #expect(try Self.sightings(filtered.outputLines).compactMap { $0.frame.iBeacon?.identity.major } == [1])
        for child in [inside, outside] { child.signal(SIGTERM) }
        for child in [inside, outside] { #expect(try await child.waitForExit() == 0) }
    }

    @Test func killingTheEmulatorEndsTheScanWithAClearErrorAndNonZeroExit() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let advertiser = try ChildProcess.proxima(["advertise", "--h4", emulator.leSocketPath, "--uuid", Self.uuid,
                                                   "--major", "1", "--minor", "1"])
        #expect(try await advertiser.waitForLine { $0.hasPrefix("Advertising iBeacon") } != nil)
        let scan = try ChildProcess.proxima(["scan", "--h4", emulator.leSocketPath])
        #expect(try await scan.waitForLine { $0.contains("iBeacon") } != nil, "\(scan.standardError)")
        emulator.kill()
        // A hang guard only: the exits normally follow within milliseconds.
        for child in [scan, advertiser] {
            let status = try await child.waitForExit(timeout: .seconds(10))
            #expect(status != nil, "no process may hang when the controller disappears")
            #expect(status != 0)
            #expect(child.standardError.contains("the controller closed the connection"), "\(child.standardError)")
        }
    }

    @Test func advertiseOnAFullStandardOutputFailsBeforeAdvertising() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let (outcome, signalled) = try await ProximaBinary.run(["advertise", "--h4", emulator.leSocketPath, "--uuid", Self.uuid,
                                                          "--major", "1", "--minor", "1"], standardOutputPath: "/dev/full")
        #expect(!signalled, "crashed: \(outcome.standardError)")
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("cannot write to standard output: No space left on device"), "\(outcome.standardError)")
    }

    @Test func advertiseOnAMissingSocketFailsClearly() async throws {
        let advertise = try ChildProcess.proxima(["advertise", "--h4", "/nonexistent/bt-server-le", "--uuid", Self.uuid,
                                                  "--major", "1", "--minor", "1"])
        #expect(try await advertise.waitForExit() == 1)
        #expect(advertise.standardError.contains("cannot connect to /nonexistent/bt-server-le"))
    }
}

/// Polls `condition` until it holds or a generous hang-guard limit passes.
func waitUntil(timeout: Duration = .seconds(20), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    // Waits on the child `proxima` processes and the btvirt emulator they talk to.
    while !condition() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
}
