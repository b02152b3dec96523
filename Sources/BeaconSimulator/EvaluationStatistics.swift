/// Summary of a sample of values: count, median, 90th and 95th percentiles and maximum.
/// Encoded as JSON numbers, with `null` for values that are not finite (an empty sample, or
/// an event that never came).
public struct Distribution: Sendable, Hashable, Codable {
    public var count: Int
    public var p50: Double
    public var p90: Double
    public var p95: Double
    public var max: Double

    private enum CodingKeys: String, CodingKey { case count, p50, p90, p95, max }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        count = try container.decode(Int.self, forKey: .count)
        p50 = try container.decodeIfPresent(Double.self, forKey: .p50) ?? .nan
        p90 = try container.decodeIfPresent(Double.self, forKey: .p90) ?? .nan
        p95 = try container.decodeIfPresent(Double.self, forKey: .p95) ?? .nan
        max = try container.decodeIfPresent(Double.self, forKey: .max) ?? .nan
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        for (key, value) in [(CodingKeys.p50, p50), (.p90, p90), (.p95, p95), (.max, max)] {
            if value.isFinite { try container.encode(value, forKey: key) } else { try container.encodeNil(forKey: key) }
        }
    }

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
