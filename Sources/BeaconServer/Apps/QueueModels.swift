import Foundation

/// A queue: devices entering `entryZoneID` start waiting, and their wait ends when they enter
/// `serviceZoneID`. Both zones belong to the queue's site.
public struct Queue: Sendable, Hashable, Codable {
    public var id: Int
    public var siteID: Int
    public var name: String
    public var entryZoneID: Int
    public var serviceZoneID: Int
    /// Seconds a device may go unseen in the queue's zones before it counts as having left.
    public var abandonAfter: Double
    public var createdAt: Double
}

/// `POST /v1/queues`.
public struct NewQueue: Sendable, Hashable, Codable {
    public var name: String
    public var entryZoneID: Int
    public var serviceZoneID: Int
    public var abandonAfter: Double?

    public init(name: String, entryZoneID: Int, serviceZoneID: Int, abandonAfter: Double? = nil) {
        self.name = name
        self.entryZoneID = entryZoneID
        self.serviceZoneID = serviceZoneID
        self.abandonAfter = abandonAfter
    }
}

/// Waits of one window: how many were served (and their p50 and p90 wait) and how many left
/// without service.
public struct WaitSummary: Sendable, Hashable, Codable {
    public var from: Double
    public var to: Double
    public var served: Int
    public var abandoned: Int
    /// Seconds; absent when nobody was served in the window.
    public var p50: Double?
    public var p90: Double?
}

/// `GET /v1/queues/{id}`: the queue, its clock, who waits now, the last 15 minutes (exact
/// quantiles over the stored waits), each hour of the last `hours` (quantiles from the hour's
/// log-binned histogram, within 0.5 %) and those hours together.
public struct QueueReport: Sendable, Hashable, Codable {
    public struct Live: Sendable, Hashable, Codable {
        /// Devices in the queue now (entered, not served, seen within `abandonAfter`).
        public var waiting: Int
        /// Seconds the longest waiting device has waited so far; absent when nobody waits.
        public var longestWait: Double?
    }

    public var queue: Queue
    /// The queue's clock: the latest sighting time any device of the site reported, moved on by
    /// the server's clock since. Devices' clocks are the gateway clocks of their sightings.
    public var clock: Double
    public var live: Live
    public var last15Minutes: WaitSummary
    public var hours: [WaitSummary]
    public var total: WaitSummary
}

/// `PUT /v1/checkin-zones/{zoneID}`.
public struct CheckinZoneRule: Sendable, Hashable, Codable {
    public var dwell: Double
    public var absence: Double

    public init(dwell: Double, absence: Double) {
        self.dwell = dwell
        self.absence = absence
    }
}

/// A zone where devices check in.
public struct CheckinZone: Sendable, Hashable, Codable {
    public var zoneID: Int
    public var siteID: Int
    public var dwell: Double
    public var absence: Double
    public var updatedAt: Double
}

/// `GET /v1/devices/{id}/checkins`: the device's latest check-ins, newest first, and its count
/// per zone.
public struct DeviceCheckins: Sendable, Hashable, Codable {
    public struct Entry: Sendable, Hashable, Codable {
        public var zoneID: Int
        /// When the visit began (its first enter), on the device's clock.
        public var visitStart: Double
        /// When the dwell threshold was passed.
        public var time: Double
    }

    public struct Loyalty: Sendable, Hashable, Codable {
        public var zoneID: Int
        public var count: Int
        public var last: Double
    }

    public var deviceID: String
    public var checkins: [Entry]
    public var loyalty: [Loyalty]
}

/// Bounds of check-ins and queues.
public enum QueueLimits {
    public static let queuesPerSite = 50
    public static let checkinZonesPerSite = 1_000
    public static let nameLength = 100
    public static let abandonAfter: ClosedRange<Double> = 10...86_400
    public static let defaultAbandonAfter = 300.0
    public static let dwell: ClosedRange<Double> = 1...86_400
    public static let absence: ClosedRange<Double> = 1...(30 * 86_400)
    /// Hours a report covers at most, and how long hourly rows are kept.
    public static let reportHours = 1...168
    public static let hourRetention = 90.0 * 86_400
    /// Individual waits are kept for the 15-minute window and a day of margin.
    public static let waitRetention = 86_400.0
    /// The most waits the 15-minute window reads (beyond that the newest are used).
    public static let windowRows = 10_000
    public static let checkinPage = 1...1_000
}
