import BeaconHCI
import BeaconKit
import BeaconTesting
import Foundation
import Testing

/// The library against BlueZ's controller emulator: each connection is a controller, all share
/// one air, and the emulator reports each advertiser once when scanning or advertising starts.
@Suite(.serialized, .enabled(if: BTVirt.shouldRunTests, "needs btvirt (bluez-test-tools) and gcc; always runs on CI"))
struct EmulatorLibraryTests {
    static func frame(major: UInt16) -> IBeaconFrame {
        IBeaconFrame(identity: BeaconIdentity(uuid: UUID(uuidString: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")!, major: major, minor: 9),
                     measuredPower: MeasuredPower(-65))
    }

    static func advertiser(_ emulator: BTVirt, major: UInt16) async throws -> HostController {
        let host = HostController(transport: try ControllerEndpoint.h4Socket(path: emulator.leSocketPath).open())
        try await host.prepareForLE()
        try await BeaconAdvertiser.start(frame(major: major), on: host)
        return host
    }

    /// Collects sightings until `count` arrived; the limit only guards against a hang.
    static func collect(_ stream: AsyncThrowingStream<Sighting, any Error>, count: Int) async throws -> [Sighting] {
        let task = Task {
            var found: [Sighting] = []
            for try await sighting in stream {
                found.append(sighting)
                if found.count == count { break }
            }
            return found
        }
        let guardTask = Task {
            // Hang guard: waits on the btvirt emulator reporting advertisers.
            try await Task.sleep(for: .seconds(20))
            task.cancel()
        }
        defer { guardTask.cancel() }
        return try await task.value
    }

    @Test func liveScanAndItsRecordingsGiveIdenticalSightings() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let snoopURL = emulator.directory.appendingPathComponent("live.btsnoop")
        let pcapURL = emulator.directory.appendingPathComponent("live.pcap")
        let writers: [any CaptureWriter] = [try BTSnoopWriter(url: snoopURL), try PcapWriter(url: pcapURL)]

        let first = try await Self.advertiser(emulator, major: 100)
        let scanner = HostController(transport: try ControllerEndpoint.h4Socket(path: emulator.leSocketPath).open(),
                                     recorders: writers)
        let session = try await ScanSession.start(controller: scanner)
        let second = try await Self.advertiser(emulator, major: 200)
        let live = try await Self.collect(session.sightings, count: 2)
        try await session.stop()
        for writer in writers { try writer.close() }
        await first.close()
        await second.close()

        #expect(Set(live.compactMap { $0.frame.iBeacon }) == [Self.frame(major: 100), Self.frame(major: 200)])
        #expect(live.allSatisfy { $0.rssi == nil })
        for url in [snoopURL, pcapURL] {
            let replayed = CaptureReplay.allSightings(capture: try CaptureReader.read(contentsOf: url), receiver: scanner.transport.name)
            #expect(replayed == live, "\(url.lastPathComponent)")
        }
    }

    @Test func stoppedAdvertiserIsNoLongerHeard() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let stopped = try await Self.advertiser(emulator, major: 1)
        try await BeaconAdvertiser.stop(on: stopped)
        let running = try await Self.advertiser(emulator, major: 2)
        let scanner = HostController(transport: try ControllerEndpoint.h4Socket(path: emulator.leSocketPath).open())
        let session = try await ScanSession.start(controller: scanner)
        // The emulator reports every advertiser at once when scanning starts; the running one is
        // the positive control, and the stopped one must not be among what arrives with it.
        let heard = try await Self.collect(session.sightings, count: 1)
        // Waits on the btvirt emulator delivering any report still on its way.
        try await Task.sleep(for: .milliseconds(200))
        try await session.stop()
        var rest: [Sighting] = []
        for try await sighting in session.sightings { rest.append(sighting) }
        #expect((heard + rest).compactMap { $0.frame.iBeacon?.identity.major } == [2])
        await stopped.close()
        await running.close()
    }

    @Test func refusedCommandCarriesTheEmulatorsStatus() async throws {
        let emulator = try BTVirt.start()
        defer { emulator.stop() }
        let host = HostController(transport: try ControllerEndpoint.h4Socket(path: emulator.leSocketPath).open())
        try await host.prepareForLE()
        // Scanning is not enabled, so disabling it is refused (BlueZ's emulator answers 0x0C).
        do {
            try await host.send(LECommand.setScanEnable(false))
            Issue.record("the emulator refuses to disable a scan that is not running")
        } catch let error as HostControllerError {
            #expect(error.status == .commandDisallowed)
            #expect(error.description.contains("LE Set Scan Enable (0x200C) failed: the controller answered Command Disallowed (0x0C)"))
        }
        await host.close()
    }
}
