import Foundation

/// Apple's calibration procedure for measured power: hold the receiver 1 m from the beacon,
/// collect its RSSI for at least 10 s, and advertise the average as the RSSI at 1 m. The report
/// also gives the spread, so a user can see a bad session (someone walked between).
public struct CalibrationReport: Sendable, Hashable {
    public var identity: BeaconIdentity
    public var sampleCount: Int
    /// Seconds between the first and last sample.
    public var duration: Double
    public var mean: Double
    /// Mean after dropping `Calibration.trimFraction` of the samples at each end, which keeps a
    /// few reflections or a passing body from moving the result.
    public var trimmedMean: Double
    public var median: Double
    /// Sample standard deviation (n − 1).
    public var standardDeviation: Double
    /// The value to advertise: the trimmed mean rounded to a whole dBm.
    public var measuredPower: MeasuredPower
}

public enum Calibration {
    /// Fewer samples than this cannot give a stable mean (Radius Networks' procedure asks for
    /// at least 20 too).
    public static let minimumSamples = 20
    /// Apple asks for at least 10 s at 1 m.
    public static let minimumDuration = 10.0
    public static let trimFraction = 0.1

    /// - Throws: ``CalibrationError`` when there are fewer than 20 samples or they span less
    ///   than `minimumDuration` seconds.
    public static func report(identity: BeaconIdentity, samples: [(time: Double, rssi: Int8)],
                              minimumDuration: Double = minimumDuration) throws(CalibrationError) -> CalibrationReport {
        guard samples.count >= minimumSamples else {
            throw .tooFewSamples(identity: identity, found: samples.count, required: minimumSamples)
        }
        let times = samples.map(\.time)
        let duration = (times.max() ?? 0) - (times.min() ?? 0)
        guard duration >= minimumDuration else {
            throw .tooShort(identity: identity, seconds: duration, required: minimumDuration)
        }
        let values = samples.map { Double($0.rssi) }.sorted()
        let count = Double(values.count)
        let mean = values.reduce(0, +) / count
        let drop = Int(count * trimFraction)
        let kept = values[drop..<(values.count - drop)]
        let trimmed = kept.reduce(0, +) / Double(kept.count)
        let middle = values.count / 2
        let median = values.count.isMultiple(of: 2) ? (values[middle - 1] + values[middle]) / 2 : values[middle]
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (count - 1)
        let power = Int8(clamping: Int(trimmed.rounded()))
        return CalibrationReport(identity: identity, sampleCount: values.count, duration: duration, mean: mean,
                                 trimmedMean: trimmed, median: median, standardDeviation: variance.squareRoot(),
                                 measuredPower: MeasuredPower(power))
    }
}

/// Collects RSSI samples of one beacon from any sightings. Without a target it keeps every
/// iBeacon and reports the one heard most often.
public struct CalibrationCollector: Sendable {
    public let target: BeaconIdentity?
    private var samples: [BeaconIdentity: [(time: Double, rssi: Int8)]] = [:]
    private var firstTime: Double?
    private var lastTime: Double?

    public init(target: BeaconIdentity? = nil) { self.target = target }

    /// Adds the sighting if it is an iBeacon with an RSSI and the target (when set).
    public mutating func add(_ sighting: Sighting) {
        guard case .iBeacon(let frame) = sighting.frame, let rssi = sighting.rssi else { return }
        if let target, target != frame.identity { return }
        samples[frame.identity, default: []].append((sighting.time, rssi))
        firstTime = firstTime ?? sighting.time
        lastTime = sighting.time
    }

    /// Seconds from the first to the last kept sample.
    public var elapsed: Double { (lastTime ?? 0) - (firstTime ?? 0) }

    /// The beacon the report will be about.
    public var chosenIdentity: BeaconIdentity? {
        target ?? samples.max { lhs, rhs in
            lhs.value.count != rhs.value.count ? lhs.value.count < rhs.value.count : lhs.key > rhs.key
        }?.key
    }

    /// Other beacons heard while collecting without a target.
    public var otherIdentities: [BeaconIdentity] {
        samples.keys.filter { $0 != chosenIdentity }.sorted()
    }

    public func report(minimumDuration: Double = Calibration.minimumDuration) throws(CalibrationError) -> CalibrationReport {
        guard let identity = chosenIdentity, samples[identity] != nil else { throw .noBeacon(target: target) }
        return try Calibration.report(identity: identity, samples: samples[identity] ?? [], minimumDuration: minimumDuration)
    }
}

public enum CalibrationError: Error, Sendable, Hashable, CustomStringConvertible {
    case tooFewSamples(identity: BeaconIdentity, found: Int, required: Int)
    case tooShort(identity: BeaconIdentity, seconds: Double, required: Double)
    case noBeacon(target: BeaconIdentity?)

    public var description: String {
        switch self {
        case .tooFewSamples(let identity, let found, let required):
            "calibration refused: \(found) RSSI samples of \(identity), at least \(required) are needed; keep the receiver 1 m from the beacon for longer"
        case .tooShort(let identity, let seconds, let required):
            "calibration refused: samples of \(identity) span \(String(format: "%.1f", seconds)) s, at least \(String(format: "%.0f", required)) s at 1 m are needed"
        case .noBeacon(let target):
            if let target { "calibration refused: no packet with an RSSI from \(target) was heard" }
            else { "calibration refused: no iBeacon packet with an RSSI was heard" }
        }
    }
}
