import ArgumentParser
import BeaconKit
import BeaconLocate
import Foundation

/// The files of one `proxima locate` run, loaded and checked, and the printing of its results.
struct LocateSession {
    let options: Locate
    var map: SiteMap
    var model: PathLossModel
    var survey: [ScanRow] = []
    var calibration: SiteCalibration?

    init(options: Locate) throws {
        self.options = options
        if let path = options.map {
            map = try SiteMapFile.load(path)
        } else {
            let beacons = try BeaconTable.parse(try Self.read(options.beacons!), file: options.beacons!)
            let extent = beacons.reduce(Position(x: 1, y: 1)) { Position(x: max($0.x, $1.position.x), y: max($0.y, $1.position.y)) }
            // A beacons file has no plan: allow positions a little beyond the outermost beacons.
            map = SiteMap(width: extent.x * 1.25 + 2, height: extent.y * 1.25 + 2, beacons: beacons)
        }
        model = PathLossModel(exponent: options.exponent, defaultPower: options.power)
        if let path = options.survey {
            survey = try layout.parse(try Self.read(path), beacons: map.beacons, file: path)
            guard survey.contains(where: { $0.truth != nil }) else {
                throw ValidationError("\(path): the survey needs truth columns (--truth-x/--truth-y or --truth-cell)")
            }
        }
        if options.calibrate {
            var calibrator = SiteCalibrator(priorPower: Dictionary(map.beacons.compactMap { beacon in beacon.measuredPower.map { (beacon.id, $0) } },
                                                                   uniquingKeysWith: { first, _ in first }),
                                            defaultPower: options.power)
            calibrator.add(scans: survey, map: map, heightOffset: model.heightOffset)
            for point in map.survey { calibrator.add(survey: point, map: map, heightOffset: model.heightOffset) }
            calibration = calibrator.fit()
            if let calibration { model = calibration.applied(to: model) }
        }
    }

    /// The labelled scans of --survey and the map's own survey: fingerprints for every method
    /// that takes them.
    var surveyPoints: [SurveyPoint] {
        survey.compactMap { scan in scan.truth.map { SurveyPoint(position: $0, readings: scan.readings) } } + map.survey
    }

    var layout: ScanTableLayout {
        ScanTableLayout(missing: options.missing, truthX: options.truthX, truthY: options.truthY, truthCell: options.truthCell,
                        cellSize: options.cellSize, groupColumn: options.splitBy, timeColumn: options.timeColumn)
    }

    static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
        guard data.count <= 512 << 20 else { throw ValidationError("\(path): expected at most 512 MiB, found \(data.count) bytes") }
        return String(decoding: data, as: UTF8.self)
    }

    func printCalibration() throws {
        if options.splitBy != nil && survey.isEmpty {
            printError("calibration: fitted for each group from the other groups' labelled scans")
            return
        }
        guard let calibration else {
            printError("calibration: not enough data (readings at two distances or more are needed: give --survey with truth columns)")
            return
        }
        if options.json {
            try StandardOutput.jsonLine(calibration)
            return
        }
        try StandardOutput.line(String(format: "calibration: exponent %.2f, residual spread %.1f dB (%d links)", calibration.exponent,
                         calibration.residualSpread, calibration.links))
        for (id, power) in calibration.beaconPower.sorted(by: { $0.key < $1.key }) { try StandardOutput.line(String(format: "  beacon %@: %.1f dBm at 1 m", id, power)) }
        for (name, gain) in calibration.receiverGain.sorted(by: { $0.key < $1.key }) { try StandardOutput.line(String(format: "  receiver %@: gain %+.1f dB", name, gain)) }
    }

    func runScans() throws {
        let path = options.scans!
        let scans = try layout.parse(try Self.read(path), beacons: map.beacons, file: path).filter { $0.readings.count >= options.minBeacons }
        let unit = options.cellSize == 1 && options.truthCell != nil ? "cells" : "m"
        if options.baseline { try printBaseline(scans, unit: unit) }
        if options.splitBy != nil {
            let errors = LeaveOneGroupOut(map: map, model: model, calibrate: options.calibrate, gain: options.gainHandling).errors(scans, methods: options.methods)
            for method in options.methods { try printSummary(ErrorSummary(errors: errors[method] ?? []), method: method, unit: unit) }
            return
        }
        // Trackers see the walk as it happened, whatever order the file lists it in.
        let walk = scans.allSatisfy { $0.time != nil }
            ? scans.enumerated().sorted { ($0.element.time!, $0.offset) < ($1.element.time!, $1.offset) }.map(\.element) : scans
        let gain = options.gain == "auto" && !map.survey.isEmpty ? .calibrated : options.gainHandling
        for method in options.methods {
            var locator = ScanLocator(method: method, map: map, model: model, survey: surveyPoints, gain: gain)
            var errors: [Double] = []
            var roomHits: [Bool] = []
            for (index, scan) in walk.enumerated() {
                let time = scan.time ?? Double(index)
                let receiver = scan.receiver ?? "receiver"
                guard let fix = locator.locate(scan.readings, receiver: receiver, at: time) else { continue }
                let room = map.room(at: fix.position)?.name
                if let truth = scan.truth {
                    errors.append(fix.position.distance(to: truth))
                    if !map.rooms.isEmpty { roomHits.append(room == map.room(at: truth)?.name) }
                }
                if options.methods.count == 1 { try printFix(time: time, receiver: receiver, fix: fix, room: room) }
            }
            if scans.contains(where: { $0.truth != nil }) {
                try printSummary(ErrorSummary(errors: errors, roomHits: roomHits), method: method, unit: unit)
            }
        }
    }

    /// The strongest-four centroid on the same scans (those with truth), the yardstick of docs/locate.md.
    func printBaseline(_ scans: [ScanRow], unit: String) throws {
        let baseline = StrongestBeaconsCentroid(positions: map.beacons.map(\.position))
        let errors = scans.compactMap { scan in scan.truth.flatMap { truth in baseline.locate(scan.readings).map { $0.distance(to: truth) } } }
        guard let summary = ErrorSummary(errors: errors) else { return }
        if options.json {
            try StandardOutput.jsonLine(LocatedSummaryLine(method: "baseline", unit: unit, summary: summary))
        } else {
            try StandardOutput.line("baseline (4 strongest, 10^(RSSI/10)) " + summary.line(unit: unit))
        }
    }

    func printFix(time: Double, receiver: String, fix: Fix, room: String?) throws {
        if options.json {
            try StandardOutput.jsonLine(LocatedFixLine(time: time, receiver: receiver, x: fix.position.x, y: fix.position.y,
                                                      uncertainty: fix.uncertainty, room: room, method: fix.method.rawValue))
        } else {
            try StandardOutput.line(String(format: "%@  %@  x %.2f  y %.2f  ±%.2f  %@  %@", Terminal.timestamp(time), receiver, fix.position.x, fix.position.y,
                             fix.uncertainty, room ?? "-", fix.method.rawValue))
        }
    }

    func printRoomEvent(_ event: RoomEvent) throws {
        if options.json {
            try StandardOutput.jsonLine(event)
        } else {
            try StandardOutput.line("\(Terminal.timestamp(event.time))  \(event.kind.rawValue)  \(event.room)  \(event.subject)")
        }
    }

    func printSummary(_ summary: ErrorSummary?, method: LocateMethod, unit: String) throws {
        guard let summary else {
            if options.json {
                try StandardOutput.jsonLine(["method": method.rawValue, "error": "no fixes"])
            } else {
                try StandardOutput.line("\(method.rawValue): no fixes")
            }
            return
        }
        if options.json {
            try StandardOutput.jsonLine(LocatedSummaryLine(method: method.rawValue, unit: unit, summary: summary))
        } else {
            try StandardOutput.line((options.methods.count > 1 ? "\(method.rawValue) " : "") + summary.line(unit: unit))
        }
    }

    mutating func runSightings(_ input: LocateSightingInput) async throws {
        guard let method = options.methods.first, options.methods.count == 1 else {
            throw ValidationError("--method all needs --scans with truth columns")
        }
        let gain = options.gain == "auto" && !map.survey.isEmpty ? .calibrated : options.gainHandling
        var locator = SightingLocator(locator: ScanLocator(method: method, map: map, model: model, survey: surveyPoints, gain: gain),
                                      presence: RoomPresence(map: map, receiverGain: model.receiverGain), survey: surveyPoints)
        for try await sighting in try await input.sightings() {
            for output in locator.receive(sighting) { try print(output) }
        }
        for output in locator.finish() { try print(output) }
    }

    private func print(_ output: LocateOutput) throws {
        switch output {
        case .fix(let time, let receiver, let fix, let room): try printFix(time: time, receiver: receiver, fix: fix, room: room)
        case .room(let event): try printRoomEvent(event)
        }
    }
}

struct LocatedFixLine: Encodable {
    var time: Double
    var receiver: String
    var x: Double
    var y: Double
    var uncertainty: Double
    var room: String?
    var method: String
}

struct LocatedSummaryLine: Encodable {
    var method: String
    var unit: String
    var summary: ErrorSummary
}
