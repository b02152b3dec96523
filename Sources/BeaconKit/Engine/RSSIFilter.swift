import DequeModule

/// How the engine smooths a beacon's RSSI before turning it into a distance. A value, so the
/// engine can switch on it per sample without dynamic dispatch.
public enum RSSIFilter: Sendable, Hashable {
    /// A one-state Kalman filter on RSSI in dB (the default); see ``KalmanParameters``.
    case kalman(KalmanParameters)
    /// AltBeacon's `RunningAverageRssiFilter`: the mean of the samples of the last `window`
    /// seconds after dropping `trimFraction` of them at each end.
    case runningTrimmedMean(window: Double, trimFraction: Double)
    /// AltBeacon's `ArmaRssiFilter`: `x ← x − c·(x − rssi)` per sample.
    case arma(coefficient: Double)
    /// The raw samples: the latest RSSI is the estimate.
    case none

    public static let `default` = RSSIFilter.kalman(.default)
    /// AltBeacon's defaults: 20 s window, 10 % trimmed at each end.
    public static let altBeaconRunningAverage = RSSIFilter.runningTrimmedMean(window: 20, trimFraction: 0.1)
    /// AltBeacon's ARMA default, c = 0.1.
    public static let altBeaconARMA = RSSIFilter.arma(coefficient: 0.1)

    var needsWindow: Bool {
        if case .runningTrimmedMean = self { return true }
        return false
    }
}

/// Noise parameters of the Kalman filter, in dB.
///
/// The state is the beacon's true mean RSSI, modelled as a random walk:
/// - `processNoise` (q, dB²/s) is how fast the true RSSI may drift, because the receiver or
///   beacon moves. The prediction step adds `q·Δt` to the variance, so a beacon silent for a
///   while is re-learnt quickly.
/// - `measurementNoise` (r, dB²) is the variance of one sample around the true mean: indoor
///   BLE samples scatter with σ ≈ 4 dB (multipath, bodies), so r = 16.
///
/// At 10 packets/s the default settles to a gain of about 0.054, an effective memory of about
/// 2 s, and an output standard deviation of about 0.7 dB for σ = 4 dB input.
public struct KalmanParameters: Sendable, Hashable {
    public var processNoise: Double
    public var measurementNoise: Double
    public init(processNoise: Double = 0.5, measurementNoise: Double = 16) {
        self.processNoise = processNoise
        self.measurementNoise = measurementNoise
    }
    public static let `default` = KalmanParameters()
}

/// The per-beacon state of the Kalman and ARMA filters: two floats, so the engine can keep it
/// in a dense array.
public struct RSSIFilterState: Sendable, Hashable {
    /// The current estimate in dBm; NaN until the first sample.
    public var estimate: Float = .nan
    /// The Kalman error variance (dB²); unused by other filters.
    public var variance: Float = 0

    public init() {}

    public var hasEstimate: Bool { !estimate.isNaN }

    /// One Kalman step: predict over `elapsed` seconds, then correct with the sample.
    @inlinable
    public mutating func kalmanUpdate(rssi: Float, elapsed: Float, processNoise q: Float, measurementNoise r: Float) {
        if estimate.isNaN {
            estimate = rssi
            variance = r
            return
        }
        let predicted = variance + q * max(elapsed, 0)
        let gain = predicted / (predicted + r)
        estimate += gain * (rssi - estimate)
        variance = (1 - gain) * predicted
    }

    /// One ARMA step.
    @inlinable
    public mutating func armaUpdate(rssi: Float, coefficient c: Float) {
        if estimate.isNaN {
            estimate = rssi
        } else {
            estimate -= c * (estimate - rssi)
        }
    }
}

/// AltBeacon's running trimmed mean over a time window. It needs the window's samples, so the
/// engine keeps one only for beacons when this filter is chosen.
public struct RunningTrimmedMean: Sendable, Hashable {
    public var window: Double
    public var trimFraction: Double
    private var samples: Deque<Sample> = []

    private struct Sample: Sendable, Hashable {
        var time: Double
        var rssi: Int8
    }

    public init(window: Double = 20, trimFraction: Double = 0.1) {
        self.window = window
        self.trimFraction = trimFraction
    }

    public mutating func add(rssi: Int8, time: Double) {
        samples.append(Sample(time: time, rssi: rssi))
        while let first = samples.first, first.time < time - window { samples.removeFirst() }
    }

    public var sampleCount: Int { samples.count }

    /// The trimmed mean, or nil without samples.
    public var estimate: Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.map(\.rssi).sorted()
        let drop = sorted.count > 2 ? Int(Double(sorted.count) * trimFraction) : 0
        let kept = sorted[drop..<(sorted.count - drop)]
        return Double(kept.reduce(0) { $0 + Int($1) }) / Double(kept.count)
    }
}

/// One beacon's filter, whatever kind, for library users who filter outside the engine.
public struct RSSIFilterChannel: Sendable, Hashable {
    public let filter: RSSIFilter
    private var state = RSSIFilterState()
    private var window: RunningTrimmedMean?
    private var lastTime: Double?

    public init(filter: RSSIFilter = .default) {
        self.filter = filter
        if case .runningTrimmedMean(let seconds, let trim) = filter {
            window = RunningTrimmedMean(window: seconds, trimFraction: trim)
        }
    }

    /// Adds a sample and returns the new estimate in dBm.
    @discardableResult
    public mutating func add(rssi: Int8, time: Double) -> Double {
        let elapsed = lastTime.map { time - $0 } ?? 0
        lastTime = time
        switch filter {
        case .kalman(let parameters):
            state.kalmanUpdate(rssi: Float(rssi), elapsed: Float(elapsed),
                               processNoise: Float(parameters.processNoise),
                               measurementNoise: Float(parameters.measurementNoise))
        case .arma(let coefficient):
            state.armaUpdate(rssi: Float(rssi), coefficient: Float(coefficient))
        case .runningTrimmedMean:
            window?.add(rssi: rssi, time: time)
            state.estimate = Float(window?.estimate ?? Double(rssi))
        case .none:
            state.estimate = Float(rssi)
        }
        return Double(state.estimate)
    }

    public var estimate: Double? { state.hasEstimate ? Double(state.estimate) : nil }
}
