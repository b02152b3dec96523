import BeaconKit

/// What really happened when a sighting was produced, to measure an estimate against.
public struct GroundTruth: Sendable, Hashable {
    /// The name of the beacon that sent the packet.
    public var beacon: String
    /// True distance from the beacon to the receiver, in metres.
    public var distance: Double
    /// Where the receiver was.
    public var receiverPosition: Position3D
    /// The received power expected from path loss, walls and antenna gain alone (dBm), i.e. the
    /// RSSI a perfect filter would converge to if shadowing were zero.
    public var meanPower: Double
    /// The scenario regions the receiver was truly inside (a matching beacon in range, see
    /// `ChannelModel.presenceThreshold`), by name, in scenario order.
    public var regions: [String]
    /// Where the beacon was (a carried beacon moves).
    public var beaconPosition = Position3D(x: 0, y: 0)
    /// The rooms (`Scenario.rooms`, by name) holding the receiver and the beacon; nil outside
    /// every room or when the scenario has none.
    public var receiverRoom: String?
    public var beaconRoom: String?
    /// The index in `Scenario.beacons` of the transmitter that sent the packet.
    public var transmitter = 0

    public init(beacon: String, distance: Double, receiverPosition: Position3D, meanPower: Double, regions: [String]) {
        self.beacon = beacon
        self.distance = distance
        self.receiverPosition = receiverPosition
        self.meanPower = meanPower
        self.regions = regions
    }
}

/// A sighting as a receiver would report it, with the truth beside it.
public struct SimulatedSighting: Sendable, Hashable {
    public var sighting: Sighting
    public var truth: GroundTruth

    public init(sighting: Sighting, truth: GroundTruth) {
        self.sighting = sighting
        self.truth = truth
    }
}

/// Where every packet opportunity went: a receiver listening on the right channel either heard
/// the packet, lost it under the sensitivity, or lost it to a collision.
public struct SimulationStatistics: Sendable, Hashable {
    public var advertisingEvents = 0
    /// Packets sent while a receiver was on another channel or between scan windows.
    public var notListening = 0
    public var belowSensitivity = 0
    public var collided = 0
    public var received = 0

    public init() {}

    /// The share of otherwise receivable packets that collisions destroyed.
    public var collisionRate: Double {
        collided + received == 0 ? 0 : Double(collided) / Double(collided + received)
    }
}

extension Scenario {
    /// Ground-truth presence: the mean power (log-distance, walls, antenna gain) of a beacon at a
    /// receiver position, the quantity compared with `channel.presenceThreshold`.
    public func meanPower(of beacon: SimulatedBeacon, at position: Position3D, antennaGain: Double) -> Double {
        meanPower(from: beacon.position, beacon: beacon, at: position, antennaGain: antennaGain)
    }

    /// The same for a beacon at `source` (where a carried beacon is at some time).
    public func meanPower(from source: Position3D, beacon: SimulatedBeacon, at position: Position3D, antennaGain: Double) -> Double {
        Propagation.meanPower(txPower: beacon.txPower, distance: source.distance(to: position), channel: channel)
            + antennaGain - Propagation.wallLoss(from: source, to: position, walls: venue.walls)
    }

    /// Where a receiver is at a time, and which way it faces.
    public func state(of receiver: SimulatedReceiver, at time: Double) -> (position: Position3D, heading: (x: Double, y: Double)) {
        switch receiver.placement {
        case .fixed(let point): (point, (1, 0))
        case .walking(let path): path.state(at: time)
        }
    }

    /// The indices of the regions (in `regions`) a receiver is truly inside at a time.
    public func trueRegions(of receiver: SimulatedReceiver, at time: Double) -> [Int] {
        regionPresence(of: receiver, at: time, edgeMargin: 0).inside
    }

    /// Ground truth with an edge: `inside` lists the regions with a matching beacon at or above
    /// the presence threshold; `reachable` those with one at or above the threshold minus
    /// `edgeMargin` dB. A region in `reachable` but not in `inside` is at the edge of range,
    /// where whether the receiver "is there" is a matter of definition.
    public func regionPresence(of receiver: SimulatedReceiver, at time: Double, edgeMargin: Double) -> (inside: [Int], reachable: [Int]) {
        let position = state(of: receiver, at: time).position
        var inside: [Int] = [], reachable: [Int] = []
        let powers = beacons.map { meanPower(from: self.position(of: $0, at: time), beacon: $0, at: position, antennaGain: receiver.antennaGain) }
        for (index, region) in regions.enumerated() {
            var best = -Double.infinity
            for (beaconIndex, beacon) in beacons.enumerated() where region.matches(beacon.identity) { best = max(best, powers[beaconIndex]) }
            if best >= channel.presenceThreshold { inside.append(index) }
            if best >= channel.presenceThreshold - edgeMargin { reachable.append(index) }
        }
        return (inside, reachable)
    }
}
