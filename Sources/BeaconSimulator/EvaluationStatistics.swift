/// Summary of a sample of values: count, median, 90th and 95th percentiles and maximum.
public struct Distribution: Sendable, Hashable {
    public var count: Int
    public var p50: Double
    public var p90: Double
    public var p95: Double
    public var max: Double

    public init(_ values: [Double]) {
        let sorted = values.sorted()
        count = sorted.count
        p50 = Distribution.percentile(sorted, 0.50)
        p90 = Distribution.percentile(sorted, 0.90)
        p95 = Distribution.percentile(sorted, 0.95)
        max = sorted.last ?? .nan
    }

    /// Linear interpolation between closest ranks (NaN for an empty sample).
    public static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let position = fraction * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down)), upper = Swift.min(lower + 1, sorted.count - 1)
        let weight = position - Double(lower)
        return sorted[lower] * (1 - weight) + sorted[upper] * weight
    }
}

/// True distance bands for ranging error, in metres.
public enum DistanceBand: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case underOne, oneToThree, threeToFive, fiveToTen, overTen

    public init(distance: Double) {
        switch distance {
        case ..<1: self = .underOne
        case ..<3: self = .oneToThree
        case ..<5: self = .threeToFive
        case ..<10: self = .fiveToTen
        default: self = .overTen
        }
    }

    public var description: String {
        switch self {
        case .underOne: "0–1 m"
        case .oneToThree: "1–3 m"
        case .threeToFive: "3–5 m"
        case .fiveToTen: "5–10 m"
        case .overTen: "≥10 m"
        }
    }
}
