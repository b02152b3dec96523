import BeaconKit
import DequeModule

/// A sighting as a server would receive it from a scenario under attack: the receiver's
/// timestamp (perhaps skewed), the server's clock when its batch arrived, and the truth of
/// which attack, if any, forged it.
public struct ObservedSighting: Sendable, Hashable {
    /// `time` is the receiver's clock as it reported it.
    public var sighting: Sighting
    public var serverTime: Double
    /// Index in `Scenario.attacks` of the attack that forged this sighting; nil for an honest one.
    public var attack: Int?
    public var truth: GroundTruth

    public init(sighting: Sighting, serverTime: Double, attack: Int?, truth: GroundTruth) {
        self.sighting = sighting
        self.serverTime = serverTime
        self.attack = attack
        self.truth = truth
    }
}

/// Runs a scenario and applies its attacks to what receivers report: copies and clones are
/// already transmitters of the simulation; here skewed clocks change timestamps and replays
/// re-send captured sightings. Every receiver uploads a batch each `uploadPeriod` seconds (at
/// its own phase), which the server stamps on arrival `transit` seconds later.
public struct AttackedSimulation: Sendable {
    public static let uploadPeriod = 1.0
    public static let transit = 0.05
    /// Most sightings one replay attack keeps captured (its memory bound).
    public static let captureLimit = 500_000

    private var simulation: Simulation
    private let scenario: Scenario
    private let attackOfTransmitter: [Int?]
    private let receiverIndex: [String: Int]
    private let uploadPhase: [Double]
    /// Per receiver, the skew attack on its clock.
    private let skews: [(attack: Int, at: Double, offset: Double, drift: Double)?]
    private let replays: [(attack: Int, beacons: Set<Int>, capturedBy: Int, from: Double, to: Double, at: Double, via: Int, fresh: Bool)]
    /// Per replay, the captured sightings waiting to be sent again, in order.
    private var captured: [Deque<SimulatedSighting>]
    private var lookahead: SimulatedSighting?

    public init(scenario: Scenario) {
        self.scenario = scenario
        simulation = Simulation(scenario: scenario)
        attackOfTransmitter = scenario.attackOfTransmitter()
        receiverIndex = Dictionary(scenario.receivers.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        uploadPhase = scenario.receivers.indices.map { (Double($0) * 0.618_034).truncatingRemainder(dividingBy: 1) * Self.uploadPeriod }
        var skews = [(attack: Int, at: Double, offset: Double, drift: Double)?](repeating: nil, count: scenario.receivers.count)
        var replays: [(attack: Int, beacons: Set<Int>, capturedBy: Int, from: Double, to: Double, at: Double, via: Int, fresh: Bool)] = []
        for (index, attack) in scenario.attacks.enumerated() {
            switch attack.kind {
            case .clockSkew(let receiver, let at, let offset, let drift):
                skews[receiver] = (index, at, offset, drift)
            case .replay(let beacons, let capturedBy, let from, let to, let at, let via, let fresh):
                replays.append((index, Set(beacons), capturedBy, from, to, at, via, fresh))
            case .spoofer, .fastClone:
                break
            }
        }
        self.skews = skews
        self.replays = replays
        captured = Array(repeating: [], count: replays.count)
    }

    /// The next sighting in the order the receivers heard them (replays at their replay time),
    /// or nil at the end of the scenario.
    public mutating func next() -> ObservedSighting? {
        if lookahead == nil { lookahead = simulation.next() }
        var earliestReplay: (index: Int, time: Double)?
        for index in replays.indices {
            guard let first = captured[index].first else { continue }
            let time = replayTime(of: first, replay: index)
            if time < (earliestReplay?.time ?? .infinity) { earliestReplay = (index, time) }
        }
        if let earliestReplay, earliestReplay.time <= (lookahead?.sighting.time ?? .infinity), earliestReplay.time < scenario.duration {
            let item = captured[earliestReplay.index].removeFirst()
            return replayed(item, replay: earliestReplay.index, at: earliestReplay.time)
        }
        guard let item = lookahead else { return nil }
        lookahead = nil
        capture(item)
        return observed(item)
    }

    private func replayTime(of item: SimulatedSighting, replay index: Int) -> Double {
        replays[index].at + (item.sighting.time - replays[index].from)
    }

    private mutating func capture(_ item: SimulatedSighting) {
        for index in replays.indices {
            let replay = replays[index]
            guard item.sighting.time >= replay.from, item.sighting.time < replay.to,
                  receiverIndex[item.sighting.receiver] == replay.capturedBy,
                  replay.beacons.contains(item.truth.transmitter),
                  captured[index].count < Self.captureLimit else { continue }
            captured[index].append(item)
        }
    }

    private func observed(_ item: SimulatedSighting) -> ObservedSighting {
        var sighting = item.sighting
        let receiver = receiverIndex[sighting.receiver] ?? 0
        var attack = attackOfTransmitter[item.truth.transmitter]
        if let skew = skews[receiver], sighting.time >= skew.at {
            sighting.time += skew.offset + skew.drift * (item.sighting.time - skew.at)
            attack = attack ?? skew.attack
        }
        return ObservedSighting(sighting: sighting, serverTime: arrival(of: item.sighting.time, receiver: receiver), attack: attack, truth: item.truth)
    }

    private func replayed(_ item: SimulatedSighting, replay index: Int, at time: Double) -> ObservedSighting {
        let replay = replays[index]
        var sighting = item.sighting
        sighting.receiver = scenario.receivers[replay.via].name
        if replay.fresh { sighting.time = time }
        return ObservedSighting(sighting: sighting, serverTime: arrival(of: time, receiver: replay.via), attack: replay.attack, truth: item.truth)
    }

    /// When the batch holding a sighting heard at `time` reaches the server.
    private func arrival(of time: Double, receiver: Int) -> Double {
        let phase = uploadPhase[receiver]
        let batches = ((time - phase) / Self.uploadPeriod).rounded(.down) + 1
        return phase + batches * Self.uploadPeriod + Self.transit
    }
}
