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
    @OptionGroup var controller: ControllerOptions

    @Option(help: ArgumentHelp("Replay a btsnoop or pcap capture; repeat it with NAME=FILE to replay one capture per receiver together, in time order.",
                               valueName: "[NAME=]FILE"))
    var replay: [String] = []

    @Option(help: "Replay speed factor (0 = as fast as possible).")
    var speed: Double = 1

    @Option(help: "Simulate a scenario file (see docs/scenarios.md).")
    var simulate: String?

    func validate() throws {
        let controllers = [controller.device, controller.h4, controller.serial].compactMap { $0 }
        if controllers.count + (replay.isEmpty ? 0 : 1) + (simulate == nil ? 0 : 1) > 1 {
            throw ValidationError("choose one source: --device, --h4, --serial, --replay or --simulate")
        }
        if speed < 0 { throw ValidationError("--speed must be 0 (as fast as possible) or positive, got \(speed)") }
    }

    /// The chosen source, with scan settings and capture recording for a live controller, whose
    /// `stop()` disables the scan.
    func open(scan settings: ScanSettings = ScanSettings(), recorders: [any PacketRecorder] = []) async throws -> SightingSource {
        if !replay.isEmpty {
            return try ReplayArgument.source(replay, speed: speed)
        }
        if let endpoint = try controller.endpointIfGiven() {
            return try await SightingSource.scan(endpoint, settings: settings, recorders: recorders) { error in
                printError("ignored a malformed advertisement: \(error)")
            }
        }
        if let scenario = try loadScenario() {
            return SightingSource.simulation(scenario, pacing: speed == 0 ? .virtual : .scaled(speed))
        }
        throw ValidationError("choose a source: --device hci0, --h4 PATH, --serial DEV, --replay FILE or --simulate SCENARIO")
    }

    /// The scenario of --simulate, or nil for the other sources.
    func loadScenario() throws -> Scenario? {
        guard let simulate else { return nil }
        do { return try Scenario.load(contentsOf: URL(fileURLWithPath: simulate)) } catch {
            throw ValidationError("\(simulate): \(error)")
        }
    }
}
