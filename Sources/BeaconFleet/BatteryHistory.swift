import BeaconKit
import Foundation

/// A beacon's battery over the last days: the hourly medians its trend is fitted through, the
/// latest reading, and the fit. Bounded by the trend's ring (14 days of hours).
public struct BatteryHistory: Sendable, Hashable, Codable {
    public struct Reading: Sendable, Hashable, Codable {
        /// Start of the hour, seconds since 1970 on the gateways' clock.
        public var time: Double
        /// The hour's median, or the current hour's median so far.
        public var millivolts: Double
    }

    public var readings: [Reading]
    public var latestMillivolts: Int?
    public var latestTime: Double?
    /// The fitted line's voltage now and slope; absent with less than a day of hours.
    public var fittedMillivolts: Double?
    public var millivoltsPerDay: Double?
}

extension BatteryTrend {
    var history: BatteryHistory {
        var readings = bins.map { BatteryHistory.Reading(time: Double($0.hour) * 3600, millivolts: Double($0.median)) }
        if let current = currentHourMedian { readings.append(current) }
        readings.sort { $0.time < $1.time }
        let fitted = fit()
        return BatteryHistory(readings: readings, latestMillivolts: latestMillivolts.map(Int.init), latestTime: latestTime,
                              fittedMillivolts: fitted?.millivolts, millivoltsPerDay: fitted?.perDay)
    }
}

extension FleetMonitor {
    /// The battery history of a registered beacon; nil when the registry does not know it.
    public func batteryHistory(of identity: BeaconIdentity) -> BatteryHistory? {
        indexByIdentity[identity].map { watches[$0].battery.history }
    }
}
