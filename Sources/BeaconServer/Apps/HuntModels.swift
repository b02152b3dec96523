import Foundation

/// A treasure hunt: numbered stamps (zones of one site) a device collects by entering them, a
/// time limit from the first stamp to the last, and a reward for finishing within it. Traces
/// faster than walking between stamps are refused with the reason.
public struct Hunt: Sendable, Hashable, Codable {
    public var id: Int
    public var siteID: Int
    public var name: String
    /// Stamp n (1-based) is the zone `stampZoneIDs[n - 1]`.
    public var stampZoneIDs: [Int]
    /// Seconds allowed from the first stamp's enter to the last one's.
    public var timeLimit: Double
    /// The fastest believable walking speed between stamps, m/s.
    public var maxSpeed: Double
    /// Metres from a stamp's zone position at which its beacon may already be heard: an enter
    /// can come this far before the stamp, so each leg is allowed to be shorter by twice it.
    public var stampReach: Double
    /// What a finisher is told they won.
    public var reward: String
    public var createdAt: Double
}

/// `POST /v1/hunts`.
public struct NewHunt: Sendable, Hashable, Codable {
    public var siteID: Int
    public var name: String
    public var stampZoneIDs: [Int]
    public var timeLimit: Double
    public var maxSpeed: Double?
    public var stampReach: Double?
    public var reward: String

    public init(siteID: Int, name: String, stampZoneIDs: [Int], timeLimit: Double, maxSpeed: Double? = nil,
                stampReach: Double? = nil, reward: String) {
        self.siteID = siteID
        self.name = name
        self.stampZoneIDs = stampZoneIDs
        self.timeLimit = timeLimit
        self.maxSpeed = maxSpeed
        self.stampReach = stampReach
        self.reward = reward
    }
}

/// One device's attempt at a hunt.
public struct HuntRun: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable, CaseIterable {
        /// Stamps are being collected, within the limit so far.
        case collecting
        /// Every stamp collected within the limit: rewarded, once.
        case finished
        /// A leg was faster than walking; `reason` says which.
        case refused
        /// A stamp came after the time limit had passed.
        case expired
    }

    public struct Stamp: Sendable, Hashable, Codable {
        public var number: Int
        /// The enter's time on the device's clock.
        public var time: Double
    }

    public var huntID: Int
    public var deviceID: String
    /// The device's name; absent for an anonymous device.
    public var name: String?
    public var status: Status
    /// Collected stamps in the order collected.
    public var stamps: [Stamp]
    public var stampCount: Int
    /// Seconds from the first stamp to the last, once finished.
    public var duration: Double?
    public var reason: String?
    /// The reward's words, once finished.
    public var reward: String?
    /// The server's clock when the reward was given.
    public var rewardedAt: Double?
    public var updatedAt: Double
}

/// A finisher on a hunt's leaderboard, fastest first.
public struct HuntLeader: Sendable, Hashable, Codable {
    public var rank: Int
    public var deviceID: String
    public var name: String?
    public var duration: Double
    public var rewardedAt: Double
}

/// `GET /v1/hunts/{id}/leaderboard`.
public struct HuntLeaderboard: Sendable, Hashable, Codable {
    public var huntID: Int
    public var leaders: [HuntLeader]
    /// Runs by status, all of them (not only the leaders listed).
    public var counts: [String: Int]
}

/// Bounds of hunts.
public struct HuntLimits: Sendable, Hashable {
    public var huntsPerSite = 50
    public var stampsPerHunt = 50
    public var nameLength = 100
    public var rewardLength = 500
    public var leaderboardLength = 1_000
    public init() {}
}
