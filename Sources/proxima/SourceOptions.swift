import ArgumentParser
import BeaconHCI
import BeaconKit
import BeaconMQTT
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

    @Option(help: ArgumentHelp("Read sightings from ESPresense nodes' reports (espresense/devices/ID/ROOM) on this broker; each node's room is a receiver.",
                               valueName: "mqtt[s]://[USER:PASS@]HOST[:PORT]"))
    var espresenseMqtt: String?

    func validate() throws {
        let controllers = [controller.device, controller.h4, controller.serial].compactMap { $0 }
        if controllers.count + (replay.isEmpty ? 0 : 1) + (simulate == nil ? 0 : 1) + (espresenseMqtt == nil ? 0 : 1) > 1 {
            throw ValidationError("choose one source: --device, --h4, --serial, --replay, --simulate or --espresense-mqtt")
        }
        if let espresenseMqtt {
            do { _ = try MQTTBrokerURL(parsing: espresenseMqtt) } catch { throw ValidationError("--espresense-mqtt: \(error)") }
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
        if let espresenseMqtt {
            let broker = try MQTTBrokerURL(parsing: espresenseMqtt)
            let client = MQTTClient(configuration: MQTTClient.Configuration(broker: broker, clientIdentifier: "proxima-espresense-\(getpid())")) {
                printError($0)
            }
            let noted = RefusalNotes()
            return await SightingSource.espresense(client: client, refused: { refusal in
                if noted.isFirst(refusal.field) { printError("ignored an ESPresense report: \(refusal) (further refusals of \(refusal.field) are not printed)") }
            })
        }
        if let scenario = try loadScenario() {
            return SightingSource.simulation(scenario, pacing: speed == 0 ? .virtual : .scaled(speed))
        }
        throw ValidationError("choose a source: --device hci0, --h4 PATH, --serial DEV, --replay FILE, --simulate SCENARIO or --espresense-mqtt URL")
    }

    /// The scenario of --simulate, or nil for the other sources.
    func loadScenario() throws -> Scenario? {
        guard let simulate else { return nil }
        do { return try Scenario.load(contentsOf: URL(fileURLWithPath: simulate)) } catch {
            throw ValidationError("\(simulate): \(error)")
        }
    }
}

/// Which fields a refusal was already printed for, so a node that keeps sending one malformed
/// field does not flood the terminal.
private final class RefusalNotes: @unchecked Sendable {
    private let lock = NSLock()
    private var fields: Set<String> = []

    func isFirst(_ field: String) -> Bool { lock.withLock { fields.insert(field).inserted } }
}
