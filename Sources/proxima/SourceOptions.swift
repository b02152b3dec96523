import ArgumentParser
import BeaconHCI
import BeaconKit
import BeaconSimulator
import Foundation

/// Where sightings come from. Shared by every command that consumes sightings (scan, monitor,
/// range, calibrate, gateway), so that each of them works on every source.
///
/// Each case only dispatches to a library type; the sources themselves live in BeaconHCI and
/// BeaconSimulator so that library users get them too.
struct SourceOptions: ParsableArguments {
    @Option(help: "Linux HCI device, e.g. hci0.")
    var device: String?

    @Option(help: "H4 controller on a unix stream socket, e.g. /tmp/bt-server-le.")
    var h4: String?

    @Option(help: "H4 controller on a serial device, DEV[@BAUD][,noflow] (default 1000000 baud, RTS/CTS on), e.g. /dev/ttyACM0@1000000.")
    var serial: String?

    @Option(help: "Replay a btsnoop or pcap capture.")
    var replay: String?

    @Option(help: "Replay speed factor (0 = as fast as possible).")
    var speed: Double = 1

    @Option(help: "Simulate a scenario file (see docs/scenarios.md).")
    var simulate: String?

    func validate() throws {
        let chosen = [device, h4, serial, replay, simulate].compactMap { $0 }
        if chosen.count > 1 {
            throw ValidationError("choose one source: --device, --h4, --serial, --replay or --simulate")
        }
        if speed < 0 { throw ValidationError("--speed must be 0 (as fast as possible) or positive, got \(speed)") }
    }

    /// A stream of sightings from the chosen source.
    func makeSightings() async throws -> AsyncThrowingStream<Sighting, any Error> {
        if let replay {
            return try CaptureReplay.sightings(url: URL(fileURLWithPath: replay), speed: speed)
        }
        if let endpoint = try controllerEndpoint(device: device, h4: h4, serial: serial) {
            return try await SightingSource.scan(endpoint, settings: ScanSettings(), recorders: []).sightings
        }
        if let scenario = try loadScenario() {
            return Simulation.sightings(scenario, pacing: speed == 0 ? .virtual : .scaled(speed))
        }
        throw ValidationError("choose a source: --device hci0, --h4 PATH, --serial DEV, --replay FILE or --simulate SCENARIO")
    }
}

extension SourceOptions {
    /// Like `makeSightings()`, with scan settings and capture recording for live controllers,
    /// and a `stop()` that disables the scan.
    func openSightings(scan settings: ScanSettings, recorders: [any PacketRecorder]) async throws -> SightingSource {
        if let endpoint = try controllerEndpoint(device: device, h4: h4, serial: serial) {
            return try await SightingSource.scan(endpoint, settings: settings, recorders: recorders)
        }
        if let replay {
            let stream = try CaptureReplay.sightings(url: URL(fileURLWithPath: replay), speed: speed)
            return SightingSource(sightings: stream, description: "Replaying \(replay)", stop: {})
        }
        return SightingSource(sightings: try await makeSightings(), description: nil, stop: {})
    }

    /// The scenario of --simulate, or nil for the other sources.
    func loadScenario() throws -> Scenario? {
        guard let simulate else { return nil }
        do { return try Scenario.load(contentsOf: URL(fileURLWithPath: simulate)) } catch {
            throw ValidationError("\(simulate): \(error)")
        }
    }
}
