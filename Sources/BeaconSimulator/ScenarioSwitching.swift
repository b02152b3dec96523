import Foundation

/// When a beacon is switched off (and on again): given periods, random ones, or both. A beacon
/// sends nothing while off; when it comes back on it starts at a random phase of its interval,
/// as a beacon does after a battery change.
public struct BeaconSwitching: Sendable, Hashable {
    /// A period without transmission, `from` up to `to` seconds (nil: off to the end).
    public struct OffPeriod: Sendable, Hashable {
        public var from: Double
        public var to: Double?

        public init(from: Double, to: Double? = nil) {
            self.from = from
            self.to = to
        }
    }

    /// Alternating on and off periods, starting on: on periods exponentially distributed with
    /// mean `meanOn`, off periods `minOff` plus an exponential part of mean `meanOff`.
    public struct RandomPeriods: Sendable, Hashable {
        public var meanOn: Double
        public var meanOff: Double
        public var minOff: Double

        public init(meanOn: Double, meanOff: Double, minOff: Double = 0) {
            self.meanOn = meanOn
            self.meanOff = meanOff
            self.minOff = minOff
        }
    }

    public var off: [OffPeriod]
    public var random: RandomPeriods?

    public init(off: [OffPeriod] = [], random: RandomPeriods? = nil) {
        self.off = off
        self.random = random
    }

    /// Most off periods one beacon's random switching produces; a long run with short means
    /// stops switching there rather than exhaust memory.
    public static let randomPeriodLimit = 100_000

    /// The beacon's off periods up to `duration`, sorted and merged. Random periods are drawn
    /// from `random`, so the same scenario and seed give the same periods.
    func offIntervals(duration: Double, random generator: inout SeededGenerator) -> [Range<Double>] {
        var intervals = off.compactMap { period -> Range<Double>? in
            let end = Swift.min(period.to ?? .infinity, duration)
            return period.from < end ? period.from..<end : nil
        }
        if let random {
            var time = 0.0
            while intervals.count < Self.randomPeriodLimit + off.count {
                time += random.meanOn * -log(1 - generator.unit())
                guard time < duration else { break }
                let end = time + random.minOff + random.meanOff * -log(1 - generator.unit())
                intervals.append(time..<Swift.min(end, duration))
                time = end
            }
        }
        intervals.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Double>] = []
        for interval in intervals {
            if let last = merged.last, interval.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<Swift.max(last.upperBound, interval.upperBound)
            } else {
                merged.append(interval)
            }
        }
        return merged
    }
}

extension Scenario {
    /// Each beacon's off periods within the scenario's duration (empty for beacons never
    /// switched off): what the simulation transmits by and what the switched-off evaluation
    /// measures against.
    public func switchSchedule() -> [[Range<Double>]] {
        let seeds = SeededGenerator(seed: seed)
        return beacons.indices.map { index in
            guard let switching = beacons[index].switching else { return [] }
            var generator = seeds.derived(7_000_000 + UInt64(index))
            return switching.offIntervals(duration: duration, random: &generator)
        }
    }

    /// Reads a beacon's `switching` object (docs/scenarios.md).
    static func switching(_ cursor: JSONCursor) throws(ScenarioError) -> BeaconSwitching {
        let object = try cursor.object(allowing: ["off", "random"])
        var periods: [BeaconSwitching.OffPeriod] = []
        let periodCursors = try object.child("off")?.elements() ?? []
        guard periodCursors.count <= BeaconSwitching.randomPeriodLimit else {
            throw ScenarioError(path: "\(cursor.path).off", expected: "at most \(BeaconSwitching.randomPeriodLimit) periods",
                                found: "\(periodCursors.count)")
        }
        for periodCursor in periodCursors {
            let period = try periodCursor.object(allowing: ["from", "to"])
            let from = try period.required("from").number(in: 0...Limits.duration)
            let to = try period.child("to").map { cursor throws(ScenarioError) in try cursor.number(in: 0...Limits.duration) }
            if let to, to <= from {
                throw ScenarioError(path: "\(periodCursor.path).to", expected: "a time after \"from\" (\(from))", found: "\(to)")
            }
            periods.append(.init(from: from, to: to))
        }
        var random: BeaconSwitching.RandomPeriods?
        if let randomCursor = object.child("random") {
            let fields = try randomCursor.object(allowing: ["meanOn", "meanOff", "minOff"])
            random = .init(meanOn: try fields.required("meanOn").number(in: 1...Limits.duration),
                           meanOff: try fields.required("meanOff").number(in: 0...Limits.duration),
                           minOff: try fields.number("minOff", default: 0, in: 0...Limits.duration))
            if random!.meanOff + random!.minOff < 0.1 {
                throw ScenarioError(path: "\(randomCursor.path).meanOff", expected: "off periods of at least 0.1 s on average (meanOff + minOff)",
                                    found: "\(random!.meanOff + random!.minOff)")
            }
        }
        return BeaconSwitching(off: periods, random: random)
    }
}

/// Moves advertising events out of their beacon's off periods.
struct SwitchingClock: Sendable {
    private let schedule: [[Range<Double>]]
    private var cursors: [Int]

    init(schedule: [[Range<Double>]]) {
        self.schedule = schedule
        cursors = Array(repeating: 0, count: schedule.count)
    }

    func isSwitched(_ beacon: Int) -> Bool { !schedule[beacon].isEmpty }

    /// The event time itself when the beacon is on then, else the end of that off period
    /// (plus `phase`, a random part of the interval). Times must be asked in increasing order.
    mutating func onTime(_ time: Double, beacon: Int, phase: Double) -> Double {
        let periods = schedule[beacon]
        guard !periods.isEmpty else { return time }
        var time = time
        while cursors[beacon] < periods.count {
            let period = periods[cursors[beacon]]
            if time < period.lowerBound { return time }
            if time < period.upperBound { time = period.upperBound + phase }
            cursors[beacon] += 1
        }
        return time
    }
}
