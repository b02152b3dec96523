/// One JSON object per event, for `--json` output and event streams:
/// `{"event":"enter"|"exit"|"state"|"range","time":…,"region":{…},"state":…,"beacons":[…]}`.
extension BeaconEvent: Encodable {
    private enum CodingKeys: String, CodingKey { case event, time, region, state, beacons }

    public var kindName: String {
        switch self {
        case .didEnter: "enter"
        case .didExit: "exit"
        case .didDetermineState: "state"
        case .didRange: "range"
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

extension RangedBeacon: Encodable {
    private enum CodingKeys: String, CodingKey {
        case uuid, major, minor, proximity, accuracy, rssi, measuredPower, timestamp, packetCount
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
