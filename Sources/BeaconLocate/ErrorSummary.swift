import Foundation

/// Position errors against truth, summarised the way the issue reports them.
public struct ErrorSummary: Sendable, Hashable, Codable {
    public var median: Double
    public var p90: Double
    public var max: Double
    public var fixes: Int
    /// Share of fixes in the right room, when rooms are known.
    public var roomAccuracy: Double?

    /// Nil for no errors.
    public init?(errors: [Double], roomHits: [Bool] = []) {
        guard !errors.isEmpty else { return nil }
        let sorted = errors.sorted()
        median = Self.quantile(sorted, 0.5)
        p90 = Self.quantile(sorted, 0.9)
        max = sorted[sorted.count - 1]
        fixes = sorted.count
        roomAccuracy = roomHits.isEmpty ? nil : Double(roomHits.filter { $0 }.count) / Double(roomHits.count)
    }

    /// Linear interpolation between order statistics.
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        let position = q * Double(sorted.count - 1)
        let lower = Int(position), upper = Swift.min(lower + 1, sorted.count - 1)
        return sorted[lower] + (position - Double(lower)) * (sorted[upper] - sorted[lower])
    }

    /// `error: median 1.23 m, p90 2.34 m, max 5.67 m (2100 fixes)`; `unit` is "m" or "cells".
    public func line(unit: String = "m") -> String {
        var text = String(format: "error: median %.2f %@, p90 %.2f %@, max %.2f %@ (%d fixes)", median, unit, p90, unit, max, unit, fixes)
        if let roomAccuracy { text += String(format: ", room %.1f %%", roomAccuracy * 100) }
        return text
    }
}
