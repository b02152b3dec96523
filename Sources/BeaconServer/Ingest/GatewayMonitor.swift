import BeaconKit
import Foundation

/// Per-gateway monitoring and ranging state: which beacons the gateway is inside, and the
/// smoothed signal of each. A value that takes sightings and returns region transitions, so it
/// can be checkpointed as JSON in the database and resumed by any server instance.
public struct GatewayMonitor: Sendable, Hashable, Codable {
    public struct Tracked: Sendable, Hashable, Codable {
        public var lastSeen: Double
        public var inside: Bool
        public var smoothedRSSI: Double?
        public var measuredPower: Int8
    }

    public enum Transition: String, Sendable, Hashable, Codable { case enter, exit }

    public struct Change: Sendable, Hashable {
        public var identity: BeaconIdentity
        public var transition: Transition
        public var time: Double
    }

    public struct Reading: Sendable, Hashable {
        public var identity: BeaconIdentity
        public var rssi: Double
        public var distance: Double?
        public var proximity: String
        public var time: Double
    }

    /// A beacon unheard this long is exited: long enough to ride out missed advertisements.
    public var exitAfter: Double
    /// Weight of the newest RSSI in the moving average.
    public var smoothing: Double
    public var tracked: [String: Tracked] = [:]
    public var now: Double = 0

    public init(exitAfter: Double = 10, smoothing: Double = 0.3) {
        self.exitAfter = exitAfter
        self.smoothing = smoothing
    }

    static func key(_ identity: BeaconIdentity) -> String { "\(identity.uuid.uuidString):\(identity.major):\(identity.minor)" }

    static func identity(key: String) -> BeaconIdentity? {
        let parts = key.split(separator: ":")
        guard parts.count == 3, let uuid = UUID(uuidString: String(parts[0])),
              let major = UInt16(parts[1]), let minor = UInt16(parts[2]) else { return nil }
        return BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    /// Feeds one batch, in time order; returns enters and exits in time order and the latest
    /// reading of every beacon heard in the batch. Exits are dated when the timeout ran out.
    public mutating func apply(_ sightings: [Sighting]) -> (changes: [Change], readings: [Reading]) {
        var changes: [Change] = []
        var heard: [String: BeaconIdentity] = [:]
        for sighting in sightings.sorted(by: { $0.time < $1.time }) {
            guard let frame = sighting.frame.iBeacon else { continue }
            let identity = frame.identity
            let power = frame.measuredPower.dBm
            let key = Self.key(identity)
            now = max(now, sighting.time)
            var entry = tracked[key] ?? Tracked(lastSeen: sighting.time, inside: false, smoothedRSSI: nil, measuredPower: power)
            if entry.inside, sighting.time - entry.lastSeen > exitAfter {
                changes.append(Change(identity: identity, transition: .exit, time: entry.lastSeen + exitAfter))
                entry.inside = false
                entry.smoothedRSSI = nil
            }
            if !entry.inside {
                changes.append(Change(identity: identity, transition: .enter, time: sighting.time))
                entry.inside = true
            }
            entry.lastSeen = max(entry.lastSeen, sighting.time)
            entry.measuredPower = power
            if let rssi = sighting.rssi {
                entry.smoothedRSSI = entry.smoothedRSSI.map { $0 + smoothing * (Double(rssi) - $0) } ?? Double(rssi)
            }
            tracked[key] = entry
            heard[key] = identity
        }
        changes += expire()
        let readings = heard.keys.sorted().compactMap { key -> Reading? in
            guard let entry = tracked[key], let identity = heard[key], let rssi = entry.smoothedRSSI else { return nil }
            let distance = Self.distance(rssi: rssi, measuredPower: entry.measuredPower)
            return Reading(identity: identity, rssi: rssi, distance: distance, proximity: Self.proximity(distance), time: entry.lastSeen)
        }
        return (changes.sorted { ($0.time, $0.transition.rawValue) < ($1.time, $1.transition.rawValue) }, readings)
    }

    /// Exits every beacon unheard for longer than `exitAfter` by the gateway's latest time.
    public mutating func expire() -> [Change] {
        var changes: [Change] = []
        for (key, entry) in tracked where entry.inside && now - entry.lastSeen > exitAfter {
            guard let identity = Self.identity(key: key) else { continue }
            changes.append(Change(identity: identity, transition: .exit, time: entry.lastSeen + exitAfter))
            tracked[key] = nil
        }
        return changes.sorted { $0.time < $1.time }
    }

    /// Log-distance path loss with exponent 2 (free space): d = 10^((P₁ₘ − RSSI) / 20) metres.
    public static func distance(rssi: Double, measuredPower: Int8) -> Double? {
        guard measuredPower < 0 else { return nil }
        return pow(10, (Double(measuredPower) - rssi) / 20)
    }

    /// Apple's coarse zones: immediate within about half a metre, near within a few metres.
    public static func proximity(_ distance: Double?) -> String {
        guard let distance else { return "unknown" }
        if distance < 0.5 { return "immediate" }
        if distance < 3 { return "near" }
        return "far"
    }
}
