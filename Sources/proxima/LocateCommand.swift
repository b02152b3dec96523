import ArgumentParser
import BeaconKit
import BeaconLocate
import Foundation

struct Locate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Positions and rooms from a site map and sightings, or from a scans file (see docs/locate.md).")

    @Option(help: "Site map JSON (beacons, receivers, rooms, walls, doors).")
    var map: String?

    @Option(help: "Beacon positions CSV with header id,x,y[,measured_power] (instead of --map).")
    var beacons: String?

    @Option(help: "Scans CSV: a column per beacon id, one scan per row, RSSI in dBm.")
    var scans: String?

    @Option(parsing: .unconditional, help: "The value that means \"not heard\" in --scans and --survey (e.g. 100 or -200).")
    var missing: Double = -200

    @Option(name: .customLong("truth-x"), help: "Column of the true x in --scans.")
    var truthX: String?

    @Option(name: .customLong("truth-y"), help: "Column of the true y in --scans.")
    var truthY: String?

    @Option(name: .customLong("truth-cell"), help: "Column of a true grid-cell label (O02 = column O, row 2) in --scans.")
    var truthCell: String?

    @Option(name: .customLong("cell-size"), help: "Size of a grid cell in metres (1 reports errors in cells).")
    var cellSize: Double = 1

    @Option(name: .customLong("split-by"), help: "Leave-one-group-out over this column of --scans (a date-time groups by day): each group is located with fingerprints and calibration learnt from the others.")
    var splitBy: String?

    @Option(name: .customLong("time-column"), help: "Column of the scan time in --scans: seconds or a date-time.")
    var timeColumn: String = "time"

    @Option(help: "Survey CSV (same layout as --scans, with truth columns) for fingerprints and calibration, joined to the map's own survey.")
    var survey: String?

    @Flag(help: "Fit the path-loss exponent, beacon powers and receiver gains from the survey scans (--survey and the map's survey) and print them.")
    var calibrate = false

    @Option(help: "centroid, trilateration, fingerprint, particle, or all (with truth: one summary per method).")
    var method: String = "trilateration"

    @Option(help: "calibrated (readings at face value, less each receiver's calibrated gain), unknown (only differences between a scan's readings count: phones nobody calibrated), or auto: unknown without any survey (--survey, the map's, or --split-by's other groups) and without --calibrate, calibrated otherwise.")
    var gain: String = "auto"

    @Option(name: .customLong("min-beacons"), help: "Scans of --scans hearing fewer beacons than this are skipped (neither located nor scored).")
    var minBeacons: Int = 1

    @Flag(help: "With truth, also print the baseline: a centroid of the 4 strongest beacons weighted by 10^(RSSI/10), on the same scans.")
    var baseline = false

    @Option(parsing: .unconditional, help: "Path-loss exponent before calibration.")
    var exponent: Double = 2

    @Option(parsing: .unconditional, help: "RSSI at 1 m for beacons without a measured power.")
    var power: Double = -59

    @Option(help: "JSON-lines sightings as `proxima scan --json` writes them (- for standard input).")
    var sightings: String?

    @OptionGroup var source: SourceOptions

    @Flag(help: "One JSON object per line.")
    var json = false

    func validate() throws {
        if (map == nil) == (beacons == nil) { throw ValidationError("give the site as --map MAP.json or --beacons FILE.csv (one of them)") }
        if (truthX == nil) != (truthY == nil) { throw ValidationError("--truth-x and --truth-y go together") }
        if truthCell != nil && truthX != nil { throw ValidationError("give truth as --truth-x/--truth-y or as --truth-cell, not both") }
        if !(cellSize > 0 && cellSize < 1e4) { throw ValidationError("--cell-size must be positive, got \(cellSize)") }
        if !(1...6).contains(exponent) { throw ValidationError("--exponent must be within 1...6, got \(exponent)") }
        if !(-127...20).contains(power) { throw ValidationError("--power must be within -127...20 dBm, got \(power)") }
        if method != "all" && LocateMethod(rawValue: method) == nil {
            throw ValidationError("--method must be centroid, trilateration, fingerprint, particle or all, got \"\(method)\"")
        }
        if !["auto", "calibrated", "unknown"].contains(gain) { throw ValidationError("--gain must be auto, calibrated or unknown, got \"\(gain)\"") }
        if !(1...1000).contains(minBeacons) { throw ValidationError("--min-beacons must be within 1...1000, got \(minBeacons)") }
        if splitBy != nil && scans == nil { throw ValidationError("--split-by needs --scans") }
        if scans != nil && sightings != nil { throw ValidationError("choose one input: --scans or --sightings") }
    }

    var gainHandling: GainHandling {
        switch gain {
        case "calibrated": .calibrated
        case "unknown": .unknown
        default: calibrate || survey != nil || splitBy != nil ? .calibrated : .unknown
        }
    }

    var methods: [LocateMethod] { method == "all" ? LocateMethod.allCases : [LocateMethod(rawValue: method)!] }

    func run() async throws {
        var session: LocateSession
        do {
            session = try LocateSession(options: self)
        } catch {
            printError("\(error)")
            throw ExitCode.failure
        }
        if calibrate { try session.printCalibration() }
        if scans != nil || sightings != nil || source.isChosen {
            do {
                if scans != nil {
                    try session.runScans()
                } else {
                    try await session.runSightings(LocateSightingInput(options: self))
                }
            } catch {
                printError("\(error)")
                throw ExitCode.failure
            }
        } else if !calibrate {
            throw ValidationError("choose an input: --scans FILE.csv, --sightings FILE.jsonl, or a source (--simulate, --replay, --h4, …)")
        }
    }
}
