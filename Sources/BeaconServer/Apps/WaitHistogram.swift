import Foundation

/// Waits binned on a logarithmic scale (each bin 1 % wider than the last), so an hour's waits
/// take a bounded number of counts whatever the traffic, hours merge by adding counts, and a
/// quantile read from the bins is within 0.5 % of the exact one (the bin's geometric middle).
/// Waits below one second share the first bin.
public struct WaitHistogram: Sendable, Hashable, Codable {
    static let growth = 1.01
    /// Up to about 10^7 s (116 days); longer waits share the last bin.
    static let binLimit = 1_620

    /// Count per bin index, only the bins used.
    public private(set) var counts: [Int: Int] = [:]
    public private(set) var total = 0

    public init() {}

    public static func bin(_ wait: Double) -> Int {
        guard wait > 1 else { return 0 }
        return min(binLimit, Int((log(wait) / log(growth)).rounded(.down)) + 1)
    }

    /// The wait a bin stands for: its geometric middle.
    public static func value(ofBin bin: Int) -> Double {
        guard bin > 0 else { return 0.5 }
        return pow(growth, Double(bin - 1) + 0.5)
    }

    public mutating func add(_ wait: Double) {
        counts[Self.bin(wait), default: 0] += 1
        total += 1
    }

    public mutating func merge(_ other: WaitHistogram) {
        for (bin, count) in other.counts { counts[bin, default: 0] += count }
        total += other.total
    }

    /// The q-quantile (0…1) by the nearest-rank definition, nil when empty.
    public func quantile(_ q: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = max(1, Int((q * Double(total)).rounded(.up)))
        var seen = 0
        for bin in counts.keys.sorted() {
            seen += counts[bin] ?? 0
            if seen >= rank { return Self.value(ofBin: bin) }
        }
        return nil
    }

    /// Exact nearest-rank quantile of a list of waits, for windows read whole.
    public static func exactQuantile(_ q: Double, of sorted: [Double]) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = max(1, Int((q * Double(sorted.count)).rounded(.up)))
        return sorted[min(sorted.count, rank) - 1]
    }

    private enum CodingKeys: String, CodingKey { case bins }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let pairs = try container.decode([[Int]].self, forKey: .bins)
        for pair in pairs where pair.count == 2 && pair[1] > 0 && (0...Self.binLimit).contains(pair[0]) {
            counts[pair[0], default: 0] += pair[1]
            total += pair[1]
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(counts.keys.sorted().map { [$0, counts[$0] ?? 0] }, forKey: .bins)
    }
}
