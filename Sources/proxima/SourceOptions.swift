import ArgumentParser
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

    @Option(help: "H4 controller on a serial device, DEV[@BAUD], e.g. /dev/ttyACM0@1000000.")
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

    /// A stream of sightings from the chosen source. Sources not yet built say so.
    func makeSightings() throws -> AsyncThrowingStream<Sighting, any Error> {
        if device != nil || h4 != nil || serial != nil || replay != nil {
            throw ValidationError("HCI sources are not available in this build yet")
        }
        if let simulate {
            let scenario = try Scenario.load(contentsOf: URL(fileURLWithPath: simulate))
            return Simulation.sightings(scenario, pacing: speed == 0 ? .virtual : .realTime)
        }
        throw ValidationError("choose a source: --device hci0, --h4 PATH, --serial DEV, --replay FILE or --simulate SCENARIO")
    }
}
