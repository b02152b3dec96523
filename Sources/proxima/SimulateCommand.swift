import ArgumentParser
import BeaconHCI
import BeaconKit
import BeaconSimulator
import Foundation

/// `proxima simulate SCENARIO`: runs a scenario and prints or records what its receivers hear.
struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Simulate a venue's beacons and receivers (see docs/scenarios.md).",
        discussion: """
            Without an output option, prints one line per sighting with its ground truth. \
            --json prints JSON lines {"sighting": …, "truth": …}; --btsnoop and --pcap write a \
            capture that `proxima scan --replay`, btmon and Wireshark read.
            """)

    @Argument(help: "Scenario file (JSON).")
    var scenario: String

    @Option(help: "Simulated seconds (default: the scenario's duration).")
    var duration: Double?

    @Flag(help: "Print JSON lines.")
    var json = false

    @Option(help: "Write a btsnoop capture (datalink 1002, H4).")
    var btsnoop: String?

    @Option(help: "Write a pcap capture (link type 201).")
    var pcap: String?

    @Option(help: "Only this receiver's sightings (captures are one controller's view).")
    var receiver: String?

    @Flag(help: "Pace the output in real time instead of as fast as possible.")
    var realtime = false

    func validate() throws {
        if [json, btsnoop != nil, pcap != nil].filter({ $0 }).count > 1 {
            throw ValidationError("choose one output: --json, --btsnoop FILE or --pcap FILE")
        }
        if let duration {
            do { try Scenario.checkDuration(duration, field: "--duration") } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        let loaded: Scenario
        do { loaded = try Scenario.load(contentsOf: URL(fileURLWithPath: scenario)) } catch {
            throw ScenarioFileError(message: "\(scenario): \(error)")
        }
        if let receiver, !loaded.receivers.contains(where: { $0.name == receiver }) {
            throw ScenarioFileError(message: "no receiver named \"\(receiver)\"; the scenario has: \(loaded.receivers.map(\.name).joined(separator: ", "))")
        }
        var writer: (any CaptureWriter)?
        if let path = btsnoop ?? pcap {
            writer = try (btsnoop != nil ? CaptureFileFormat.btsnoop : .pcap).makeWriter(url: URL(fileURLWithPath: path))
            if receiver == nil && loaded.receivers.count > 1 {
                FileHandle.standardError.write(Data("note: writing all \(loaded.receivers.count) receivers into one capture; use --receiver NAME for one controller's view\n".utf8))
            }
        }
        var written = 0
        var output = StandardOutputBuffer()
        for try await item in Simulation.stream(loaded, pacing: realtime ? .realTime : .virtual, duration: duration) {
            if let receiver, item.sighting.receiver != receiver { continue }
            if let writer {
                guard let report = item.advertisingReport else { continue }
                let microseconds = Int64(((SimulatedSighting.captureEpoch + item.sighting.time) * 1_000_000).rounded())
                let packet = HCIPacket(type: .event, body: AdvertisingReport.legacyEventPacket([report]))
                try writer.record(TimestampedPacket(microseconds: microseconds, direction: .received, packet: packet))
                written += 1
            } else {
                try output.append(json ? try item.jsonLine() : item.summary)
                if realtime { try output.flush() }
            }
        }
        try output.flush()
        if let writer {
            try writer.close()
            FileHandle.standardError.write(Data("wrote \(written) advertising reports to \(btsnoop ?? pcap ?? "")\n".utf8))
        }
    }
}

/// A scenario the command cannot use, printed as `Error: FILE: path: expected …, found …`
/// without the usage text that belongs to mistyped options.
struct ScenarioFileError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
