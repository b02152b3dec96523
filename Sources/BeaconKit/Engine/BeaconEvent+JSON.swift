import Foundation

/// One JSON object per event, the one form every consumer reads: `proxima monitor --json` and
/// `proxima range --json` lines, and the server's stored events, Server-Sent Events, WebSocket
/// messages and webhook deliveries (which add their ids and labels beside these fields).
/// docs/events.md describes it; the names follow Core Location's `CLBeaconRegion`, `CLBeacon`,
/// `CLRegionState` and `CLProximity`.
///
/// `{"event":"enter"|"exit"|"state"|"range","time":…,"region":{…},"state":…,"beacons":[…]}`
extension BeaconEvent: Codable {
    private enum CodingKeys: String, CodingKey { case event, time, region, state, beacons }

    /// The `event` field: `enter`, `exit`, `state` or `range` (also the SSE `event:` line).
    public var kindName: String {
        switch self {
        case .didEnter: "enter"
        case .didExit: "exit"
        case .didDetermineState: "state"
        case .didRange: "range"
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .event)
        let time = try container.decode(Double.self, forKey: .time)
        guard time.isFinite else {
            throw DecodingError.dataCorruptedError(forKey: .time, in: container,
                debugDescription: "expected a finite number of seconds, found \(time)")
        }
        let region = try container.decode(BeaconRegion.self, forKey: .region)
        switch kind {
        case "enter": self = .didEnter(region, time: time)
        case "exit": self = .didExit(region, time: time)
        case "state": self = .didDetermineState(try container.decode(RegionState.self, forKey: .state), region, time: time)
        case "range": self = .didRange(try container.decode([RangedBeacon].self, forKey: .beacons), region, time: time)
        default:
            throw DecodingError.dataCorruptedError(forKey: .event, in: container,
                debugDescription: "expected enter, exit, state or range, found '\(kind.prefix(40))'")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kindName, forKey: .event)
        try container.encode(time, forKey: .time)
        try container.encode(region, forKey: .region)
        switch self {
        case .didDetermineState(let state, _, _): try container.encode(state, forKey: .state)
        case .didRange(let beacons, _, _): try container.encode(beacons, forKey: .beacons)
        case .didEnter, .didExit: break
        }
    }
}

/// `CLBeacon`'s fields: `proximity` is `immediate`, `near`, `far` or `unknown`; `accuracy` is
/// metres, −1 when unknown; `rssi` is dBm, 0 when the beacon was not heard this cycle.
extension RangedBeacon: Codable {
    private enum CodingKeys: String, CodingKey {
        case uuid, major, minor, proximity, accuracy, rssi, measuredPower, timestamp, packetCount
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let proximityName = try container.decode(String.self, forKey: .proximity)
        guard let proximity = Proximity.allCases.first(where: { $0.description == proximityName }) else {
            throw DecodingError.dataCorruptedError(forKey: .proximity, in: container,
                debugDescription: "expected immediate, near, far or unknown, found '\(proximityName.prefix(40))'")
        }
        self.init(identity: try BeaconIdentity(from: decoder), proximity: proximity,
                  accuracy: try container.decode(Double.self, forKey: .accuracy),
                  rssi: try container.decode(Int.self, forKey: .rssi),
                  measuredPower: try container.decode(MeasuredPower.self, forKey: .measuredPower),
                  timestamp: try container.decode(Double.self, forKey: .timestamp),
                  packetCount: try container.decode(Int.self, forKey: .packetCount))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identity.uuid.uuidString, forKey: .uuid)
        try container.encode(identity.major, forKey: .major)
        try container.encode(identity.minor, forKey: .minor)
        try container.encode(proximity.description, forKey: .proximity)
        try container.encode(accuracy, forKey: .accuracy)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(Int(measuredPower.dBm), forKey: .measuredPower)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(packetCount, forKey: .packetCount)
    }
}

extension BeaconRegion {
    /// The region of exactly one beacon, named by its `UUID:MAJOR:MINOR` (how the server names
    /// the region of each identity a gateway hears).
    public static func exactly(_ identity: BeaconIdentity) throws(RegionError) -> BeaconRegion {
        try BeaconRegion(identifier: "\(identity.uuid.uuidString):\(identity.major):\(identity.minor)",
                         uuid: identity.uuid, major: identity.major, minor: identity.minor)
    }
}

extension CalibrationReport: Encodable {
    private enum CodingKeys: String, CodingKey {
        case uuid, major, minor, samples, duration, mean, trimmedMean, median, standardDeviation, measuredPower
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identity.uuid.uuidString, forKey: .uuid)
        try container.encode(identity.major, forKey: .major)
        try container.encode(identity.minor, forKey: .minor)
        try container.encode(sampleCount, forKey: .samples)
        try container.encode(duration, forKey: .duration)
        try container.encode(mean, forKey: .mean)
        try container.encode(trimmedMean, forKey: .trimmedMean)
        try container.encode(median, forKey: .median)
        try container.encode(standardDeviation, forKey: .standardDeviation)
        try container.encode(Int(measuredPower.dBm), forKey: .measuredPower)
    }
}
