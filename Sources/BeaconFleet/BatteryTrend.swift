import Foundation

/// A battery's voltage over days from Eddystone-TLM, and when it will reach the cutoff.
///
/// Readings are noisy (temperature, load at the instant of measuring) and beacons send TLM every
/// few seconds, so readings are binned by hour (median of at most `readingsPerHour`), and a line
/// is fitted through the last `days` of hourly medians. A fixed ring keeps memory bounded.
struct BatteryTrend: Sendable {
    struct HourBin: Sendable {
        var hour: Int
        var median: Float
    }

    static let readingsPerHour = 32
    static let hoursKept = 14 * 24

    private(set) var bins: [HourBin] = []
    private var nextBin = 0
    private var currentHour: Int?
    private var currentReadings: [UInt16] = []
    private(set) var latestMillivolts: UInt16?
    private(set) var latestTime: Double?

    mutating func record(millivolts: UInt16, at time: Double) {
        latestMillivolts = millivolts
        latestTime = time
        let hour = Int((time / 3600).rounded(.down))
        if let current = currentHour, hour != current {
            closeHour()
        }
        currentHour = hour
        if currentReadings.count < Self.readingsPerHour { currentReadings.append(millivolts) }
    }

    /// The current, unfinished hour's median so far.
    var currentHourMedian: BatteryHistory.Reading? {
        guard let hour = currentHour, !currentReadings.isEmpty else { return nil }
        let sorted = currentReadings.sorted()
        return BatteryHistory.Reading(time: Double(hour) * 3600, millivolts: Double(sorted[sorted.count / 2]))
    }

    private mutating func closeHour() {
        guard let hour = currentHour, !currentReadings.isEmpty else { return }
        let sorted = currentReadings.sorted()
        let bin = HourBin(hour: hour, median: Float(sorted[sorted.count / 2]))
        if bins.count < Self.hoursKept {
            bins.append(bin)
        } else {
            bins[nextBin] = bin
            nextBin = (nextBin + 1) % Self.hoursKept
        }
        currentReadings.removeAll(keepingCapacity: true)
    }

    /// The fitted voltage now and its slope in millivolts per day, over the last `windowHours`
    /// of closed hours and the current one. Nil with less than a day of hours: a slope from fewer
    /// is mostly the daily temperature cycle.
    func fit(windowHours: Int = hoursKept) -> (millivolts: Double, perDay: Double, hours: Int)? {
        var points = bins.map { (Double($0.hour), Double($0.median)) }
        if let hour = currentHour, !currentReadings.isEmpty {
            let sorted = currentReadings.sorted()
            points.append((Double(hour), Double(sorted[sorted.count / 2])))
        }
        guard let newest = points.map(\.0).max() else { return nil }
        points.removeAll { $0.0 <= newest - Double(windowHours) }
        guard points.count >= 24, let first = points.map(\.0).min(), newest - first >= 23 else { return nil }
        let last = newest
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.0 } / n
        let meanY = points.reduce(0) { $0 + $1.1 } / n
        var sxx = 0.0
        var sxy = 0.0
        for (x, y) in points {
            sxx += (x - meanX) * (x - meanX)
            sxy += (x - meanX) * (y - meanY)
        }
        guard sxx > 0 else { return nil }
        let perHour = sxy / sxx
        let now = meanY + perHour * (last - meanX)
        return (now, perHour * 24, points.count)
    }

    /// Days until the cutoff; nil when the voltage is not falling measurably. Cells discharge
    /// flat and then fall at a knee, so the last three days' line is taken beside the two weeks'
    /// and the sooner end wins: near the knee the long line alone would promise too much.
    func daysLeft(cutoff: Double) -> Double? {
        let estimates = [fit(windowHours: 72), fit()].compactMap { line -> Double? in
            guard let line, line.perDay < -0.05 else { return nil }
            return max(0, (line.millivolts - cutoff) / -line.perDay)
        }
        return estimates.min()
    }
}
