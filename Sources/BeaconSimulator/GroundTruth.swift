import BeaconKit

/// What really happened when a sighting was produced, to measure an estimate against.
public struct GroundTruth: Sendable, Hashable {
    /// The name of the beacon that sent the packet.
    public var beacon: String
    /// True distance from the beacon to the receiver, in metres.
    public var distance: Double
    /// Where the receiver was.
    public var receiverPosition: Point
    /// The received power expected from path loss, walls and antenna gain alone (dBm), i.e. the
    /// RSSI a perfect filter would converge to if shadowing were zero.
    public var meanPower: Double
    /// The scenario regions the receiver was truly inside (a matching beacon in range, see
    /// `ChannelModel.presenceThreshold`), by name, in scenario order.
    public var regions: [String]

    public init(beacon: String, distance: Double, receiverPosition: Point, meanPower: Double, regions: [String]) {
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
    public func meanPower(of beacon: SimulatedBeacon, at position: Point, antennaGain: Double) -> Double {
        Propagation.meanPower(txPower: beacon.txPower, distance: beacon.position.distance(to: position), channel: channel)
            + antennaGain - Propagation.wallLoss(from: beacon.position, to: position, walls: venue.walls)
    }

    /// Where a receiver is at a time, and which way it faces.
    public func state(of receiver: SimulatedReceiver, at time: Double) -> (position: Point, heading: (x: Double, y: Double)) {
        switch receiver.placement {
        case .fixed(let point): (point, (1, 0))
        case .walking(let path): path.state(at: time)
        }
    }

    /// The indices of the regions (in `regions`) a receiver is truly inside at a time.
    public func trueRegions(of receiver: SimulatedReceiver, at time: Double) -> [Int] {
        let position = state(of: receiver, at: time).position
        let inRange = beacons.filter { meanPower(of: $0, at: position, antennaGain: receiver.antennaGain) >= channel.presenceThreshold }
        return regions.indices.filter { index in inRange.contains { regions[index].matches($0.identity) } }
    }
}
