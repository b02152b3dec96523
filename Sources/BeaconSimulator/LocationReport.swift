import Foundation

/// What `LocationEvaluation` measured: position error per method in both directions, how well
/// each room decider followed the true rooms, and what self-calibration recovered.
public struct LocationReport: Sendable, Hashable, Codable {
    /// Who is located from what.
    public enum Direction: String, Sendable, Hashable, Codable, CaseIterable {
        /// Walkers' phones, each locating itself from the fixed beacons.
        case phones
        /// Carried beacons, located from the fixed receivers (gateways) that hear them.
        case tags

        public var label: String {
            switch self {
            case .phones: "walkers (phones) from fixed beacons"
            case .tags: "carried beacons from fixed gateways"
            }
        }
    }

    /// The row of the default room decider in both directions (BeaconLocate's `RoomDecider`
    /// with `.phones` or `.tags`).
    public static let defaultRoomDecider = "room filter (default)"
    /// The row of the room decider the server runs (BeaconLocate's `RoomDecider.Configuration.tagsWithoutParticles` and `.phonesWithoutParticles`).
    public static let withoutParticlesRoomDecider = "room filter without particles (the server's)"
    /// The row of the default decider with `particles` per subject and no survey (`RoomDecider.Configuration.serverTags` and `.serverPhones`).
    public static func noSurveyParticlesRoomDecider(_ particles: Int) -> String { "room filter, \(particles) particles, no survey" }

    public struct PositionError: Sendable, Hashable, Codable {
        public var direction: Direction
        public var method: String
        public var median: Double
        public var p90: Double
        public var max: Double
        public var fixes: Int
    }

    public struct RoomResult: Sendable, Hashable, Codable {
        public var direction: Direction
        /// How rooms were decided: ``LocationReport/defaultRoomDecider`` (a `RoomFilter`),
        /// possibly with a variant after a comma, "room gateways", "room beacons", a peer's rule
        /// (a label ending in "(peer)": ESPresense, Bermuda, room-assistant; tags only) or
        /// "fixes (METHOD)", with ", no hysteresis" when the room of every fix is taken as it comes.
        public var decider: String
        /// Share of whole seconds where the decided room equals the true room.
        public var accuracy: Double
        public var seconds: Int
        public var trueChanges: Int
        /// Room changes the decider announced (entries after the first room); many more than
        /// `trueChanges` is flapping.
        public var decidedChanges: Int
        /// Seconds from a true room change to the decider naming the new room.
        public var latencyP50: Double?
        public var latencyP95: Double?
        public var latencyMax: Double?
        /// True changes never followed before the next one.
        public var missed: Int
        /// Ghost presence: seconds from truly leaving a room until the decider stops naming it
        /// (counted up to the subject's return), over every time a subject left a room.
        public var ghostP50: Double? = nil
        public var ghostP95: Double? = nil
        public var ghostMax: Double? = nil
    }

    public struct Calibration: Sendable, Hashable, Codable {
        public var trueExponent: Double
        public var fittedExponent: Double
        /// Fitted minus true power at 1 m, by fixed beacon, in dB. True is the beacon's
        /// `txPower − referenceLoss` plus the mean antenna gain of the receivers in the fit
        /// (the fit's gains average to zero, so a common offset goes into the powers).
        public var powerErrors: [String: Double]
        /// Fitted minus true gain (antenna gain minus the mean over the fit's receivers), dB.
        public var gainErrors: [String: Double]
        public var links: Int
        public var residualSpread: Double

        public var largestPowerError: Double { powerErrors.values.map(abs).max() ?? 0 }
        public var largestGainError: Double { gainErrors.values.map(abs).max() ?? 0 }
    }

    public var cycle: Double
    /// Seconds per room decision of a carried beacon (``LocationEvaluation/tagRoomCycle``); nil
    /// in reports from before it existed, when it was `cycle`.
    public var tagRoomCycle: Double?
    public var surveyPoints: Int
    public var positions: [PositionError]
    public var rooms: [RoomResult]
    public var calibration: Calibration?
    /// The scenario seeds pooled (``LocationEvaluation/seeds``); the calibration is the first's.
    public var seeds: [UInt64] = []

    enum CodingKeys: String, CodingKey { case cycle, tagRoomCycle, surveyPoints, positions, rooms, calibration, seeds }

    init(cycle: Double, tagRoomCycle: Double?, surveyPoints: Int, positions: [PositionError], rooms: [RoomResult], calibration: Calibration?, seeds: [UInt64]) {
        self.cycle = cycle
        self.tagRoomCycle = tagRoomCycle
        self.surveyPoints = surveyPoints
        self.positions = positions
        self.rooms = rooms
        self.calibration = calibration
        self.seeds = seeds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        cycle = try container.decode(Double.self, forKey: .cycle)
        tagRoomCycle = try container.decodeIfPresent(Double.self, forKey: .tagRoomCycle)
        surveyPoints = try container.decode(Int.self, forKey: .surveyPoints)
        positions = try container.decode([PositionError].self, forKey: .positions)
        rooms = try container.decode([RoomResult].self, forKey: .rooms)
        calibration = try container.decodeIfPresent(Calibration.self, forKey: .calibration)
        seeds = try container.decodeIfPresent([UInt64].self, forKey: .seeds) ?? []
    }

    /// The lowest median error of a method other than the centroid, over the centroid's, for a
    /// direction (nil without both).
    public func bestToCentroid(_ direction: Direction) -> (method: String, ratio: Double)? {
        let rows = positions.filter { $0.direction == direction }
        guard let centroid = rows.first(where: { $0.method == "centroid" }), centroid.median > 0,
              let best = rows.filter({ $0.method != "centroid" }).min(by: { $0.median < $1.median }) else { return nil }
        return (best.method, best.median / centroid.median)
    }

    public var text: String {
        var lines: [String] = []
        lines.append("Positions and rooms (fixes every \(format(cycle, 1)) s, error = distance from the true position at the middle of the cycle; \(surveyPoints) survey points simulated for fingerprints)")
        if seeds.count > 1 {
            lines.append("Pooled over \(seeds.count) runs, seeds \(seeds.map(String.init).joined(separator: ", ")): every figure is taken over all runs' samples; the calibration is seed \(seeds[0])'s")
        }
        lines.append(row(["direction", "method", "median m", "p90 m", "max m", "fixes"], widths: [40, 16, 10, 8, 8, 8]))
        for error in positions {
            lines.append(row([error.direction.label, error.method, format(error.median, 2), format(error.p90, 2), format(error.max, 2), "\(error.fixes)"],
                             widths: [40, 16, 10, 8, 8, 8]))
        }
        for direction in Direction.allCases {
            if let best = bestToCentroid(direction) {
                lines.append("best for \(direction.rawValue): \(best.method), median \(format(best.ratio, 2)) × the centroid's")
            }
        }
        if !rooms.isEmpty {
            lines.append("")
            lines += roomLines
        }
        if let calibration {
            lines.append("")
            lines.append("Self-calibration (fixed receivers hearing fixed beacons, and the survey): exponent \(format(calibration.fittedExponent, 2)) (scenario \(format(calibration.trueExponent, 2)), off by \(format(calibration.fittedExponent - calibration.trueExponent, 2))); "
                + "beacon powers within \(format(calibration.largestPowerError, 2)) dB of the truth (\(calibration.powerErrors.count) beacons), "
                + "receiver gains within \(format(calibration.largestGainError, 2)) dB (\(calibration.gainErrors.count) receivers); "
                + "\(calibration.links) links, residual spread \(format(calibration.residualSpread, 2)) dB")
        }
        return lines.joined(separator: "\n")
    }

    private var roomLines: [String] {
        var lines = ["Rooms (accuracy = % of seconds with the decided room equal to the true room; changes t/d = true / decided room changes; latency from a true room change to the decided one, s; ghost = s a room is still named after truly leaving it)"]
        if let tagRoomCycle, tagRoomCycle != cycle {
            lines.append("Phones' room filters decide every \(format(cycle, 1)) s; carried beacons' room filters every \(format(tagRoomCycle, 1)) s, on their own locators; the other deciders as their packets or fixes arrive")
        }
        let widths = [10, 42, 10, 9, 14, 12, 7, 7, 7, 10, 7, 7]
        lines.append(row(["subjects", "decided by", "accuracy", "seconds", "changes t/d", "latency p50", "p95", "max", "missed", "ghost p50", "p95", "max"], widths: widths))
        for room in rooms {
            lines.append(row([room.direction.rawValue, room.decider, format(room.accuracy * 100, 1) + " %", "\(room.seconds)",
                              "\(room.trueChanges)/\(room.decidedChanges)",
                              room.latencyP50.map { format($0, 1) } ?? "-", room.latencyP95.map { format($0, 1) } ?? "-",
                              room.latencyMax.map { format($0, 1) } ?? "-", "\(room.missed)",
                              room.ghostP50.map { format($0, 1) } ?? "-", room.ghostP95.map { format($0, 1) } ?? "-",
                              room.ghostMax.map { format($0, 1) } ?? "-"],
                             widths: widths))
        }
        return lines
    }

    private func format(_ value: Double, _ digits: Int) -> String {
        value.isFinite ? String(format: "%.\(digits)f", value) : "-"
    }

    private func row(_ cells: [String], widths: [Int]) -> String {
        zip(cells, widths).enumerated().map { index, pair in
            let (cell, width) = pair
            let padding = String(repeating: " ", count: max(1, width - cell.count))
            return index == 0 ? cell + padding : padding + cell
        }.joined()
    }
}
