import BeaconKit

/// One sighting as the server received it: what the receiver reported, plus the server's own
/// clock at arrival, the only time the checks trust.
public struct SecurityObservation: Sendable, Hashable {
    public var receiver: String
    public var identity: BeaconIdentity
    public var rssi: Int8?
    public var address: BluetoothAddress?
    /// The measured power the frame advertised (used only for beacons the site does not know).
    public var advertisedPower: MeasuredPower?
    /// Seconds on the receiver's clock, as it reported them.
    public var receiverTime: Double
    /// Seconds on the server's clock when the batch holding the sighting arrived.
    public var serverTime: Double

    public init(receiver: String, identity: BeaconIdentity, rssi: Int8?, address: BluetoothAddress?,
                advertisedPower: MeasuredPower? = nil, receiverTime: Double, serverTime: Double) {
        self.receiver = receiver
        self.identity = identity
        self.rssi = rssi
        self.address = address
        self.advertisedPower = advertisedPower
        self.receiverTime = receiverTime
        self.serverTime = serverTime
    }

    /// An iBeacon sighting stamped with the server's time; nil for other frames.
    public init?(_ sighting: Sighting, serverTime: Double) {
        guard case .iBeacon(let frame) = sighting.frame else { return nil }
        self.init(receiver: sighting.receiver, identity: frame.identity, rssi: sighting.rssi, address: sighting.address,
                  advertisedPower: frame.measuredPower, receiverTime: sighting.time, serverTime: serverTime)
    }
}

/// A suspected spoof, replay or tampered clock, with a reason a person can read.
public struct SecurityAlert: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A receiver's clock leads the server's, or wandered from the offset it had.
        case clockSkew
        /// Sightings arrived much later than their timestamps: held back or replayed.
        case staleSightings
        /// A carried identity heard at places farther apart than a person can walk in the time between.
        case impossibleTrace
        /// A fixed beacon heard by a gateway too strongly for the distance between them.
        case outOfCoverage
        /// A fixed beacon's recent RSSI at a fixed gateway rose abruptly above its long mean.
        case rssiShift
        /// A registered beacon's identity heard from another address.
        case secondAddress
        /// A rotating beacon's identity of a past period (or too far ahead): recorded and played back.
        case replayedIdentity
        /// A phone heard a fixed beacon strongly but none of the fixed beacons around it: a copy
        /// of the beacon is near the phone, far from the real one.
        case absentNeighbours
    }

    public var kind: Kind
    /// The beacon the alert is about; nil for a receiver's clock.
    public var identity: BeaconIdentity?
    /// The receivers whose sightings raised it.
    public var receivers: [String]
    public var reason: String
    /// Server time of the sighting that raised it.
    public var time: Double

    public init(kind: Kind, identity: BeaconIdentity?, receivers: [String], reason: String, time: Double) {
        self.kind = kind
        self.identity = identity
        self.receivers = receivers
        self.reason = reason
        self.time = time
    }
}
