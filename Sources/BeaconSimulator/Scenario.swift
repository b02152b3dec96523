import BeaconKit
import BeaconLocate
import BeaconRotation
import Foundation

/// A straight wall between two floor points, costing `attenuation` dB to every path that crosses it.
public struct Wall: Sendable, Hashable {
    public var from: Position3D
    public var to: Position3D
    public var attenuation: Double

    public init(from: Position3D, to: Position3D, attenuation: Double) {
        self.from = from
        self.to = to
        self.attenuation = attenuation
    }
}

public struct Venue: Sendable, Hashable {
    public var width: Double
    public var height: Double
    public var walls: [Wall]

    public init(width: Double, height: Double, walls: [Wall] = []) {
        self.width = width
        self.height = height
        self.walls = walls
    }
}

/// One simulated transmitter.
public struct SimulatedBeacon: Sendable, Hashable {
    public var name: String
    public var identity: BeaconIdentity
    public var address: BluetoothAddress
    public var position: Position3D
    /// The calibration byte the beacon advertises (RSSI it claims at 1 m).
    public var measuredPower: MeasuredPower
    /// Radiated power in dBm; the true mean RSSI at 1 m is `txPower - channel.referenceLoss`.
    public var txPower: Double
    /// Advertising interval in seconds (before the random advDelay).
    public var interval: Double
    public var batteryMillivolts: UInt16
    /// Whether the beacon also sends an Eddystone-TLM frame every tenth advertising event.
    public var telemetry: Bool
    /// A carried beacon (an asset, a person's tag) moves along this path; `position` is then
    /// its first waypoint. Nil for a beacon fixed at `position`.
    public var path: WalkerPath? = nil
    /// When the beacon is switched off and on again; nil = always on.
    public var switching: BeaconSwitching?
    /// The battery's type as a registry names it (`CR2477`, `CR2032`, …): its cutoff voltage is
    /// where a battery-death fault ends.
    public var batteryType = "CR2477"
    /// Where a fixed beacon was moved to, and when, in time order (a `move` fault).
    public var relocations: [BeaconRelocation] = []
    /// A rotating beacon sends its key's identity of the current period (simulated seconds
    /// count as seconds since 1970); `identity` is then its registered identity.
    public var rotation: RotatingIdentity?

    public init(name: String, identity: BeaconIdentity, address: BluetoothAddress, position: Position3D,
                measuredPower: MeasuredPower = .appleDefault, txPower: Double = 0, interval: Double = 0.1,
                batteryMillivolts: UInt16 = 3000, telemetry: Bool = false, path: WalkerPath? = nil,
                switching: BeaconSwitching? = nil) {
        self.switching = switching
        self.name = name
        self.identity = identity
        self.address = address
        self.position = position
        self.measuredPower = measuredPower
        self.txPower = txPower
        self.interval = interval
        self.batteryMillivolts = batteryMillivolts
        self.telemetry = telemetry
        self.path = path
    }
}

/// A receiver: a fixed gateway or a walker carrying a phone along a path.
public struct SimulatedReceiver: Sendable, Hashable {
    public enum Placement: Sendable, Hashable {
        case fixed(Position3D)
        case walking(WalkerPath)
    }

    public var name: String
    public var placement: Placement
    /// Added to every received power (dB): a phone's antenna and case differ from the reference.
    public var antennaGain: Double
    /// Fraction of each scan interval spent listening (a scan window / scan interval ratio).
    public var dutyCycle: Double
    /// Seconds per scan interval; the receiver listens on one advertising channel per interval,
    /// cycling 37, 38, 39.
    public var scanInterval: Double
    /// Whether a human body sits behind the phone (walkers) and shadows beacons behind it.
    public var body: Bool

    public init(name: String, placement: Placement, antennaGain: Double = 0, dutyCycle: Double = 1,
                scanInterval: Double = 0.1, body: Bool? = nil) {
        self.name = name
        self.placement = placement
        self.antennaGain = antennaGain
        self.dutyCycle = dutyCycle
        self.scanInterval = scanInterval
        if let body { self.body = body } else if case .walking = placement { self.body = true } else { self.body = false }
    }
}

/// A region for ground truth and evaluation, with Core Location's matching: UUID, UUID+major,
/// or UUID+major+minor.
public struct SimulatedRegion: Sendable, Hashable {
    public var name: String
    public var uuid: UUID
    public var major: UInt16?
    public var minor: UInt16?

    public init(name: String, uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) {
        self.name = name
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public func matches(_ identity: BeaconIdentity) -> Bool {
        identity.uuid == uuid && (major.map { $0 == identity.major } ?? true) && (minor.map { $0 == identity.minor } ?? true)
    }
}

/// Everything a simulation needs: the venue, who transmits, who listens, the radio channel, the
/// regions that ground truth reports on, the duration and the seed.
public struct Scenario: Sendable, Hashable {
    public var name: String
    public var seed: UInt64
    /// Simulated seconds.
    public var duration: Double
    public var venue: Venue
    public var channel: ChannelModel
    public var beacons: [SimulatedBeacon]
    public var receivers: [SimulatedReceiver]
    public var regions: [SimulatedRegion]
    /// Named rooms (BeaconLocate's, so a scenario is also a site map; see `siteMap`).
    public var rooms: [Room] = []
    public var doors: [Door] = []
    /// Faults injected on purpose (ScenarioFaults.swift): the truth fleet checks are scored against.
    public var faults: [ScenarioFault] = []
    /// A generated queue venue and its customers' truth (ScenarioQueue.swift); nil without one.
    public var queue: QueueVenue?
    /// Spoofers, clones, skewed clocks and replays (ScenarioAttacks.swift): the truth security
    /// checks are scored against.
    public var attacks: [ScenarioAttack] = []

    public init(name: String, seed: UInt64, duration: Double, venue: Venue, channel: ChannelModel = ChannelModel(),
                beacons: [SimulatedBeacon], receivers: [SimulatedReceiver], regions: [SimulatedRegion]? = nil) {
        self.name = name
        self.seed = seed
        self.duration = duration
        self.venue = venue
        self.channel = channel
        self.beacons = beacons
        self.receivers = receivers
        self.regions = regions ?? Scenario.regionPerIdentity(beacons)
    }

    /// One exact region per beacon identity, named after its first beacon: the regions ground
    /// truth reports on when a scenario names none.
    public static func regionPerIdentity(_ beacons: [SimulatedBeacon]) -> [SimulatedRegion] {
        var seen: Set<BeaconIdentity> = []
        return beacons.filter { seen.insert($0.identity).inserted }.map { beacon in
            SimulatedRegion(name: beacon.name, uuid: beacon.identity.uuid, major: beacon.identity.major, minor: beacon.identity.minor)
        }
    }
}

extension Scenario {
    /// The scenario's regions as the engine monitors them, named as in the scenario. A region
    /// the engine would refuse (a minor without a major) cannot come out of a validated file.
    public var monitoringRegions: [BeaconRegion] {
        regions.compactMap { region in
            try? BeaconRegion(identifier: region.name, uuid: region.uuid, major: region.major, minor: region.minor)
        }
    }
}
