import ArgumentParser
import BeaconKit
import Foundation

struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a beacon's power at 1 m (Apple's procedure) and print the value to advertise.",
        discussion: """
            Hold the receiver 1 m from the beacon, in the open, for at least 10 s. Proxima reports \
            the number of samples, mean, 10 % trimmed mean, median and standard deviation, and \
            prints the trimmed mean rounded as the measured power to set. Fewer than 20 samples \
            are refused.
            """)

    @OptionGroup var source: SourceOptions

    @Option(help: ArgumentHelp("The beacon to calibrate; by default the one heard most often.", valueName: "UUID:MAJOR:MINOR"))
    var beacon: String?

    @Option(help: "Seconds to collect (at least 10).")
    var duration: Double = Calibration.minimumDuration

    @Flag(help: "Print the report as JSON.")
    var json = false

    func validate() throws {
        if duration < Calibration.minimumDuration {
            throw ValidationError("--duration must be at least \(Int(Calibration.minimumDuration)) s (Apple's procedure), got \(duration)")
        }
        _ = try target()
    }

    func target() throws -> BeaconIdentity? {
        guard let beacon else { return nil }
        let region: BeaconRegion
        do { region = try BeaconRegion(parsing: beacon) } catch { throw ValidationError("--beacon: \(error.description)") }
        guard let major = region.major, let minor = region.minor else {
            throw ValidationError("--beacon needs UUID:MAJOR:MINOR, one exact beacon; found '\(beacon)'")
        }
        return BeaconIdentity(uuid: region.uuid, major: major, minor: minor)
    }

    func run() async throws {
        let opened = try await source.open()
        let sightings = opened.sightings
        let wanted = duration
        let collecting = Task { () throws -> CalibrationCollector in
            var collector = CalibrationCollector(target: try target())
            for try await sighting in sightings {
                collector.add(sighting)
                if collector.elapsed >= wanted { break }
            }
            return collector
        }
        // A live source that goes quiet must not hold the command forever.
        let deadline: Task<Void, Never>? = opened.timing == .live ? Task {
            try? await Task.sleep(nanoseconds: UInt64((wanted + 5) * 1_000_000_000))
            collecting.cancel()
        } : nil
        let collector = try await collecting.value
        deadline?.cancel()
        let report: CalibrationReport
        do { report = try collector.report(minimumDuration: Calibration.minimumDuration) } catch {
            throw EngineCommandError(error.description)
        }
        if json {
            try StandardOutput.jsonLine(report)
            return
        }
        try StandardOutput.line("beacon              \(report.identity)")
        if !collector.otherIdentities.isEmpty {
            try StandardOutput.line("also heard          \(collector.otherIdentities.map(\.description).joined(separator: ", ")) (use --beacon to choose)")
        }
        try StandardOutput.line("samples             \(report.sampleCount) over \(String(format: "%.1f", report.duration)) s")
        try StandardOutput.line("mean                \(String(format: "%.2f", report.mean)) dBm")
        try StandardOutput.line("trimmed mean (10 %) \(String(format: "%.2f", report.trimmedMean)) dBm")
        try StandardOutput.line("median              \(String(format: "%.1f", report.median)) dBm")
        try StandardOutput.line("standard deviation  \(String(format: "%.2f", report.standardDeviation)) dB")
        try StandardOutput.line("measured power to set: \(report.measuredPower.dBm) dBm (0x\(String(format: "%02X", report.measuredPower.byte)))")
    }
}
