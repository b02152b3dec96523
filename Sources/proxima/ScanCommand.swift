import ArgumentParser
import BeaconHCI
import BeaconKit
import Foundation

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scan for beacons of every format and print each sighting live (SIGINT disables the scan and exits 0).")

    @OptionGroup var source: SourceOptions

    @Option(name: .customLong("region"), help: "Only iBeacons in this region: UUID[:MAJOR[:MINOR]]. Repeatable.")
    var regions: [String] = []

    @Flag(help: "Print one JSON object per sighting.")
    var json = false

    @Flag(help: "Active scan (send scan requests) instead of passive.")
    var active = false

    @Option(help: "Record every HCI packet: FILE.pcap as pcap (link type 201), anything else as btsnoop. Repeatable.")
    var record: [String] = []

    func validate() throws {
        for region in regions {
            do { _ = try IdentityPattern(parsing: region) } catch { throw ValidationError(error.description) }
        }
        if !record.isEmpty && (!source.replay.isEmpty || source.simulate != nil) {
            throw ValidationError("--record captures a live controller's packets; it cannot be used with --replay or --simulate")
        }
    }

    func run() async throws {
        var patterns: [IdentityPattern] = []
        for region in regions {
            do { patterns.append(try IdentityPattern(parsing: region)) } catch { throw ValidationError(error.description) }
        }
        var writers: [any CaptureWriter] = []
        for path in record {
            do {
                writers.append(try CaptureFileFormat(fileName: path).makeWriter(url: URL(fileURLWithPath: path)))
            } catch {
                printError("cannot create \(path): \(error)")
                throw ExitCode.failure
            }
        }
        defer { for writer in writers { try? writer.close() } }
        let signals = ProcessSignals.stream([SIGINT, SIGTERM])
        let scan: SightingSource
        do {
            scan = try await source.open(scan: ScanSettings(active: active), recorders: writers)
        } catch {
            printError("\(error)")
            throw ExitCode.failure
        }
        if let description = scan.description { FileHandle.standardError.write(Data("\(description)\n".utf8)) }
        let json = self.json
        let printer = Task {
            for try await sighting in scan.sightings where IdentityPattern.admits(sighting.frame, patterns: patterns) {
                if json {
                    try StandardOutput.jsonLine(sighting)
                } else {
                    try StandardOutput.line(sighting.listingLine)
                }
            }
        }
        let interrupted = Task { () -> Int32? in
            for await number in signals { return number }
            return nil
        }
        let stopSignal = Task {
            if let number = await interrupted.value {
                printError("\(ProcessSignals.name(number)) received: disabling the scan")
                printer.cancel()
                return true
            }
            return false
        }
        let result = await printer.result
        interrupted.cancel()
        let signalled = await stopSignal.value
        do {
            try await scan.stop()
        } catch where !signalled {
            // The scan already failed; its own error is the one to report.
        } catch {
            printError("could not disable the scan: \(error)")
            throw ExitCode.failure
        }
        if case .failure(let error) = result, !signalled, !(error is CancellationError) {
            printError("\(error)")
            throw ExitCode.failure
        }
    }
}
