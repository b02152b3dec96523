import ArgumentParser
import BeaconKit
import Foundation

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

    @Option(help: ArgumentHelp("When a silent beacon is gone: adaptive, altbeacon (10 s), ios (30 s) or a fixed number of seconds.",
                               valueName: "RULE"))
    var exitRule: String = "adaptive"

    @Option(help: "Packets needed before a beacon counts as present.")
    var entryEvidence: Int = 1

    @Option(help: "RSSI filter: kalman, trimmed-mean (AltBeacon running average), arma or none.")
    var filter: String = "kalman"

    @Option(help: "Distance model: log-distance, altbeacon (Nexus 5 curve), nexus4 or bleacon.")
    var model: String = "log-distance"

    @Option(help: "Path-loss exponent n of the log-distance model.")
    var exponent: Double = 2.0

    @Option(help: "Seconds a silent beacon stays in ranging lists.")
    var trackingAge: Double = 5

    func validate() throws {
        _ = try configuration()
        for text in regions { _ = try region(text) }
        if entryEvidence < 1 { throw ValidationError("--entry-evidence must be at least 1, got \(entryEvidence)") }
    }

    func configuration() throws -> EngineConfiguration {
        let rule: ExitRule
        switch exitRule.lowercased() {
        case "adaptive": rule = .default
        case "altbeacon": rule = .altBeacon
        case "ios": rule = .iOSLike
        default:
            guard let seconds = Double(exitRule), seconds > 0, seconds.isFinite else {
                throw ValidationError("--exit-rule expects adaptive, altbeacon, ios or a positive number of seconds, found '\(exitRule)'")
            }
            rule = .fixedDelay(seconds: seconds)
        }
        let rssiFilter: RSSIFilter
        switch filter.lowercased() {
        case "kalman": rssiFilter = .default
        case "trimmed-mean": rssiFilter = .altBeaconRunningAverage
        case "arma": rssiFilter = .altBeaconARMA
        case "none": rssiFilter = .none
        default: throw ValidationError("--filter expects kalman, trimmed-mean, arma or none, found '\(filter)'")
        }
        guard exponent > 0, exponent.isFinite else { throw ValidationError("--exponent must be positive, found \(exponent)") }
        let distanceModel: DistanceModel
        switch model.lowercased() {
        case "log-distance": distanceModel = .logDistance(pathLossExponent: exponent)
        case "altbeacon": distanceModel = .altBeaconDefault
        case "nexus4": distanceModel = .curveFit(.nexus4)
        case "bleacon": distanceModel = .bleacon
        default: throw ValidationError("--model expects log-distance, altbeacon, nexus4 or bleacon, found '\(model)'")
        }
        guard trackingAge >= 0 else { throw ValidationError("--tracking-age must be 0 or more, found \(trackingAge)") }
        return EngineConfiguration(exitRule: rule, entryEvidence: entryEvidence, trackingAge: trackingAge,
                                   filter: rssiFilter, distance: DistanceConfiguration(model: distanceModel))
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

extension SourceOptions {
    /// Live sources stamp sightings with the wall clock, so the engine must be ticked with it
    /// between packets; replays and the simulator carry their own time.
    var deliversLiveTime: Bool { device != nil || h4 != nil || serial != nil }
}

/// A refusal at run time (not a usage mistake), printed without the usage text.
struct EngineCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
