import ArgumentParser
import BeaconKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Regions and engine parameters shared by `monitor` and `range`.
struct EngineOptions: ParsableArguments {
    @Option(name: .customLong("region"), help: ArgumentHelp(
        "A region UUID[:MAJOR[:MINOR]] (repeatable), in addition to the stored ones (see `proxima regions`).",
        valueName: "UUID[:MAJOR[:MINOR]]"))
    var regions: [String] = []

    @Flag(help: "Ignore the stored regions; use only --region.")
    var noStoredRegions = false

    @Option(help: "Use only sightings from this receiver (one engine models one receiver; sources such as the simulator have several).")
    var receiver: String?

    @Flag(help: "Print one JSON object per event instead of a table.")
    var json = false

    @Option(help: ArgumentHelp("When a silent beacon is gone: evidence (the default), adaptive, altbeacon (10 s), ios (30 s) or a fixed number of seconds.",
                               valueName: "RULE"), transform: { try ExitRuleChoice(parsing: $0) })
    var exitRule: ExitRuleChoice = .evidence

    @Option(help: "Packets needed before a beacon counts as present.")
    var entryEvidence: Int = 1

    @Option(help: "RSSI filter: kalman, trimmed-mean (AltBeacon running average), arma or none.")
    var filter: RSSIFilterChoice = .kalman

    @Option(help: "Distance model: robust (log-distance that does not trust the advertised power completely), log-distance, altbeacon (Nexus 5 curve), nexus4 or bleacon.")
    var model: DistanceModelChoice = .robust

    @Option(help: "Path-loss exponent n of the robust and log-distance models.")
    var exponent: Double = 2.0

    @Option(help: "Seconds a silent beacon stays in ranging lists.")
    var trackingAge: Double = 5

    func validate() throws {
        for text in regions { _ = try region(text) }
        if entryEvidence < 1 { throw ValidationError("--entry-evidence must be at least 1, got \(entryEvidence)") }
        guard exponent > 0, exponent.isFinite else { throw ValidationError("--exponent must be positive, found \(exponent)") }
        guard trackingAge >= 0 else { throw ValidationError("--tracking-age must be 0 or more, found \(trackingAge)") }
    }

    var configuration: EngineConfiguration {
        EngineConfiguration(exitRule: exitRule.rule, entryEvidence: entryEvidence, trackingAge: trackingAge,
                            filter: filter.filter, distance: DistanceConfiguration(model: model.model(pathLossExponent: exponent)))
    }

    func region(_ text: String) throws -> BeaconRegion {
        do { return try BeaconRegion(parsing: text) } catch { throw ValidationError("--region: \(error.description)") }
    }

    /// Stored regions (unless --no-stored-regions) then --region ones, later ones replacing
    /// earlier ones with the same identifier.
    /// A simulated venue brings its own regions; they are used when no other region is given.
    func allRegions(simulatedRegions: [BeaconRegion] = []) throws -> [BeaconRegion] {
        var result: [BeaconRegion] = noStoredRegions ? [] : try RegionStore().load()
        if result.isEmpty && regions.isEmpty { result = simulatedRegions }
        for text in regions {
            let region = try region(text)
            result.removeAll { $0.identifier == region.identifier }
            result.append(region)
        }
        if result.isEmpty {
            throw ValidationError("no region: pass --region UUID[:MAJOR[:MINOR]], store one with `proxima regions add`, or use --simulate with a scenario that has regions")
        }
        return result
    }
}

/// A refusal at run time (not a usage mistake), printed without the usage text.
struct EngineCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension EngineOptions {
    /// Runs the engine on the chosen source and hands every event to `mqtt` (when given) and
    /// `output`. When `output` throws (standard output failed), the source is stopped and the
    /// error rethrown.
    func run(_ sourceOptions: SourceOptions, monitoring: [BeaconRegion], ranging: [BeaconRegion], mqtt: MQTTOutput? = nil,
             output: (BeaconEvent) async throws -> Void) async throws {
        try await run(opened: try await sourceOptions.open(), monitoring: monitoring, ranging: ranging, mqtt: mqtt, output: output)
    }

    func run(opened: SightingSource, monitoring: [BeaconRegion], ranging: [BeaconRegion], mqtt: MQTTOutput? = nil,
             output: (BeaconEvent) async throws -> Void) async throws {
        let signals = ProcessSignals.stream()
        var source = opened
        if let mqtt, await mqtt.wantsSightings { source = mqtt.tapping(source) }
        let manager = BeaconManager(configuration: configuration)
        let receiver = self.receiver
        let engineSource = source
        let running = Task {
            try await manager.run(engineSource, monitoring: monitoring, ranging: ranging, receiver: receiver,
                                  notices: { notice in printError("note: \(notice)") })
        }
        // SIGINT or SIGTERM stops the source (a controller's scan is disabled and the link
        // closed) and ends the run, so the process exits 0 with the controller idle; sources
        // with nothing to stop (a replay) end at once too. A second signal, once the first has
        // been handled, ends the process at once.
        let stopper = Task { () -> Bool? in
            for await number in signals {
                printError("\(ProcessSignals.name(number)) received: stopping the source")
                signal(number, SIG_DFL)
                var stoppedCleanly = true
                do {
                    try await engineSource.stop()
                } catch {
                    printError("could not stop the source cleanly: \(error)")
                    stoppedCleanly = false
                }
                running.cancel()
                return stoppedCleanly
            }
            return nil
        }
        do {
            for await event in manager.events {
                await mqtt?.send(event)
                try await output(event)
            }
        } catch {
            stopper.cancel()
            running.cancel()
            try? await source.stop()
            await mqtt?.finish()
            throw error
        }
        await mqtt?.finish()
        let result = await running.result
        stopper.cancel()
        switch (await stopper.value, result) {
        case (false, _): throw ExitCode.failure
        case (true, .failure(let error)) where error is CancellationError: return
        default: try result.get()
        }
    }
}
