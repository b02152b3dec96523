import BeaconKit
import Foundation
import HeapModule

/// Runs a scenario on a virtual clock and produces the sightings each receiver hears, in time
/// order, with ground truth. Deterministic: the same scenario and seed give the same sightings.
///
/// Advertising events come from a min-heap of each beacon's next event time. An event is only
/// resolved once every event that could overlap it on the air (within one packet duration) is
/// known, so collisions can be judged per receiver with the capture ratio.
public struct Simulation: Sendable {
    public let scenario: Scenario
    public private(set) var statistics = SimulationStatistics()
    /// Simulated time of the last resolved advertising event.
    public private(set) var now: Double = 0

    private var radio: SeededGenerator
    private var beaconTiming: [SeededGenerator]
    private var eventCounts: [UInt32]
    private var queue = EventHeap()
    /// Beacons' off periods (see ``BeaconSwitching``).
    private var switching: SwitchingClock
    /// Injected faults (ScenarioFaults.swift): batteries running down, receivers offline.
    private let discharges: [BatteryDischarge?]
    private let outages: [[Range<Double>]]
    private let hasOutages: Bool
    private var window: [AdvertisingEvent] = []
    private var cursor = 0
    private var links: [Link]
    /// What the per-packet path reads of each link, packed small so the whole table stays in cache.
    private var hot: [HotLink]
    private let fadingTable: FadingTable?
    private var receivers: [ReceiverState]
    private var output: [SimulatedSighting] = []
    private var outputIndex = 0
    private let beaconCount: Int
    /// For each beacon, the regions (indices) it belongs to.
    private let beaconRegions: [[Int]]
    /// Receiver parameters the per-packet path reads, unpacked from the scenario once.
    private let scanIntervals: [Double]
    private let dutyCycles: [Double]
    private let relevanceFloor: Double
    /// Interferers weaker than this (dBm) are lost in the receiver's noise: 10 dB under the
    /// sensitivity, about the thermal noise of a 1 MHz channel (−174 dBm/Hz + 60 dB) plus a
    /// typical noise figure.
    private let interferenceFloor: Double
    /// Upper bound in dB that a fading sample adds to the mean; packets whose link could not reach
    /// the sensitivity even with it are rejected without drawing random numbers.
    private let fadingHeadroom: Double

    public init(scenario: Scenario) {
        self.scenario = scenario
        beaconCount = scenario.beacons.count
        let seedStream = SeededGenerator(seed: scenario.seed)
        radio = seedStream.derived(1)
        beaconTiming = scenario.beacons.indices.map { seedStream.derived(1000 + UInt64($0)) }
        eventCounts = Array(repeating: 0, count: scenario.beacons.count)
        switching = SwitchingClock(schedule: scenario.transmissionSchedule())
        discharges = scenario.batteryDischarges()
        outages = scenario.receiverOutages()
        hasOutages = outages.contains { !$0.isEmpty }
        switch scenario.channel.fading {
        case .none: fadingHeadroom = 0
        case .logNormal(let sigma): fadingHeadroom = 4.5 * sigma
        case .rician(_, _, let spread): fadingHeadroom = 10 + 4.5 * spread
        }
        interferenceFloor = scenario.channel.sensitivity - 10
        relevanceFloor = min(scenario.channel.sensitivity - 10 - fadingHeadroom, scenario.channel.presenceThreshold)
        beaconRegions = scenario.beacons.map { beacon in scenario.regions.indices.filter { scenario.regions[$0].matches(beacon.identity) } }
        scanIntervals = scenario.receivers.map(\.scanInterval)
        dutyCycles = scenario.receivers.map(\.dutyCycle)
        var setup = seedStream.derived(2)
        if case .rician(let kNear, _, _) = scenario.channel.fading {
            var tableRandom = seedStream.derived(3)
            fadingTable = FadingTable(kFactorNear: kNear, random: &tableRandom)
        } else {
            fadingTable = nil
        }
        receivers = scenario.receivers.map { receiver in
            ReceiverState(scanPhase: setup.uniform(0, receiver.scanInterval), regionCounts: Array(repeating: 0, count: scenario.regions.count))
        }
        links = []
        links.reserveCapacity(scenario.receivers.count * scenario.beacons.count)
        hot = []
        hot.reserveCapacity(scenario.receivers.count * scenario.beacons.count)
        for _ in scenario.receivers {
            for _ in scenario.beacons {
                var offsets = Link.frequencyTerms
                if case .rician(_, _, let spread) = scenario.channel.fading {
                    offsets.0 += spread * setup.gaussian()
                    offsets.1 += spread * setup.gaussian()
                    offsets.2 += spread * setup.gaussian()
                }
                links.append(Link(shadow: scenario.channel.shadowingSigma * setup.gaussian(), channelOffsets: offsets))
                hot.append(HotLink(offsets: (Float(offsets.0), Float(offsets.1), Float(offsets.2))))
            }
        }
        for index in scenario.beacons.indices {
            // Beacons are switched on at random moments, so their events start out of phase.
            var first = beaconTiming[index].uniform(0, scenario.beacons[index].interval)
            if switching.isSwitched(index) {
                first = switching.onTime(first, beacon: index, phase: beaconTiming[index].uniform(0, scenario.beacons[index].interval))
            }
            queue.push(AdvertisingEvent(time: first, beacon: index))
        }
        for receiverIndex in scenario.receivers.indices { refreshAll(receiverIndex, at: 0) }
    }

    /// The next sighting, or nil once the scenario's duration has passed.
    public mutating func next() -> SimulatedSighting? {
        while outputIndex >= output.count {
            output.removeAll(keepingCapacity: true)
            outputIndex = 0
            guard resolveNextEvent() else { return nil }
        }
        defer { outputIndex += 1 }
        return output[outputIndex]
    }

    /// Runs to the end and returns every sighting (for tests and small scenarios).
    public mutating func run() -> [SimulatedSighting] {
        var all: [SimulatedSighting] = []
        while let sighting = next() { all.append(sighting) }
        return all
    }

    /// The region indices each receiver is inside, as the simulation currently knows them.
    public func currentRegions(receiver index: Int) -> [Int] {
        receivers[index].regionCounts.indices.filter { receivers[index].regionCounts[$0] > 0 }
    }

    // MARK: - Event loop

    private mutating func resolveNextEvent() -> Bool {
        // Bring in every event that could overlap the one at the cursor.
        if cursor >= window.count {
            guard let event = popAndSchedule() else { return false }
            window.append(event)
        }
        let current = window[cursor]
        guard current.time < scenario.duration else { return false }
        while let upcoming = queue.peek, upcoming.time < current.time + Propagation.packetDuration {
            _ = upcoming
            if let event = popAndSchedule() { window.append(event) }
        }
        // Forget events that can no longer overlap anything still to come.
        var dropped = 0
        while dropped < cursor, window[dropped].time <= current.time - Propagation.packetDuration { dropped += 1 }
        if dropped > 64 {
            window.removeFirst(dropped)
            cursor -= dropped
        }
        now = current.time
        statistics.advertisingEvents += 1
        resolve(cursor)
        cursor += 1
        return true
    }

    private mutating func popAndSchedule() -> AdvertisingEvent? {
        guard var event = queue.pop() else { return nil }
        let beacon = scenario.beacons[event.beacon]
        // Core Spec Vol 6 Part B §4.4.2.2.1: T_advEvent = advInterval + advDelay, advDelay a
        // pseudo-random 0–10 ms.
        var next = event.time + beacon.interval + beaconTiming[event.beacon].uniform(0, 0.010)
        if switching.isSwitched(event.beacon) {
            next = switching.onTime(next, beacon: event.beacon, phase: beaconTiming[event.beacon].uniform(0, beacon.interval))
        }
        queue.push(AdvertisingEvent(time: next, beacon: event.beacon))
        eventCounts[event.beacon] &+= 1
        event.sequence = eventCounts[event.beacon]
        return event
    }

    private mutating func resolve(_ index: Int) {
        let event = window[index]
        var frame: BeaconFrame?
        for receiverIndex in receivers.indices {
            if hasOutages, outages[receiverIndex].contains(where: { $0.contains(event.time) }) {
                statistics.notListening += 1
                continue
            }
            guard let channel = listeningChannel(receiverIndex, at: event.time) else {
                statistics.notListening += 1
                continue
            }
            let linkIndex = receiverIndex * beaconCount + event.beacon
            if hot[linkIndex].nextRefresh <= event.time { refresh(receiverIndex, beacon: event.beacon, at: event.time) }
            let fast = hot[linkIndex]
            let base = fast.level + Double(fast.offset(channel))
            if base + fadingHeadroom < scenario.channel.sensitivity {
                statistics.belowSensitivity += 1
                continue
            }
            let power = base + fade(fast)
            if power < scenario.channel.sensitivity {
                statistics.belowSensitivity += 1
                continue
            }
            if collides(index, power: power, receiver: receiverIndex, channel: channel) {
                statistics.collided += 1
                continue
            }
            statistics.received += 1
            let beacon = scenario.beacons[event.beacon]
            if frame == nil { frame = self.frame(of: beacon, index: event.beacon, sequence: event.sequence) }
            let rssiValue = scenario.channel.quantize ? power.rounded() : power
            let rssi = Int8(clamping: Int(max(-127, min(20, rssiValue)).rounded()))
            let sighting = Sighting(time: event.time, receiver: scenario.receivers[receiverIndex].name, address: beacon.address,
                                    rssi: rssi, frame: frame ?? .iBeacon(IBeaconFrame(identity: beacon.identity)))
            let link = links[linkIndex]
            var truth = GroundTruth(beacon: beacon.name, distance: link.distance, receiverPosition: link.position,
                                    meanPower: link.receivedMean + link.bodyLoss, regions: receivers[receiverIndex].regionNames(scenario.regions))
            truth.beaconPosition = link.beaconPosition
            truth.transmitter = event.beacon
            truth.receiverRoom = link.receiverRoom.map { scenario.rooms[$0].name }
            truth.beaconRoom = link.beaconRoom.map { scenario.rooms[$0].name }
            output.append(SimulatedSighting(sighting: sighting, truth: truth))
        }
    }

    /// The advertising channel (0, 1, 2 for 37, 38, 39) the receiver listens on, or nil between
    /// scan windows.
    private func listeningChannel(_ index: Int, at time: Double) -> Int? {
        let local = time + receivers[index].scanPhase
        let scanInterval = scanIntervals[index], dutyCycle = dutyCycles[index]
        // Times are never negative, so truncation is the floor (and avoids a libm call).
        let intervals = Int(local / scanInterval)
        if dutyCycle < 1 && local - Double(intervals) * scanInterval > dutyCycle * scanInterval { return nil }
        return intervals % 3
    }

    private mutating func fade(_ link: HotLink) -> Double {
        if let fadingTable { return fadingTable.sample(table: link.fadingTable, uniform: radio.unit()) }
        if case .logNormal(let sigma) = scenario.channel.fading { return sigma * radio.gaussian() }
        return 0
    }

    /// Whether another packet on the same channel overlapped this one at this receiver strongly
    /// enough to break it (within the capture ratio).
    private mutating func collides(_ index: Int, power: Double, receiver: Int, channel: Int) -> Bool {
        let time = window[index].time
        var other = index - 1
        var hit = false
        while other >= 0, window[other].time > time - Propagation.packetDuration {
            if interferes(window[other], victimPower: power, receiver: receiver, channel: channel) { hit = true }
            other -= 1
        }
        other = index + 1
        while other < window.count, window[other].time < time + Propagation.packetDuration {
            if interferes(window[other], victimPower: power, receiver: receiver, channel: channel) { hit = true }
            other += 1
        }
        return hit
    }

    private mutating func interferes(_ event: AdvertisingEvent, victimPower: Double, receiver: Int, channel: Int) -> Bool {
        let linkIndex = receiver * beaconCount + event.beacon
        if hot[linkIndex].nextRefresh <= event.time { refresh(receiver, beacon: event.beacon, at: event.time) }
        let fast = hot[linkIndex]
        let base = fast.level + Double(fast.offset(channel))
        // Interference must beat the capture ratio and rise above the receiver's noise floor.
        let threshold = max(victimPower - scenario.channel.captureRatio, interferenceFloor)
        if base + fadingHeadroom < threshold { return false }
        return base + fade(fast) > threshold
    }

    // MARK: - Links

    private mutating func refreshAll(_ receiverIndex: Int, at time: Double) {
        for beaconIndex in scenario.beacons.indices { refresh(receiverIndex, beacon: beaconIndex, at: time) }
    }

    /// Recomputes a link's geometry: distance, walls, body, shadowing (advanced by Gudmundson's
    /// correlation over the distance moved) and presence, then decides when it needs looking at
    /// again. Links far below anything that matters are revisited only when the walker could have
    /// come close enough.
    private mutating func refresh(_ receiverIndex: Int, beacon beaconIndex: Int, at time: Double) {
        let receiver = scenario.receivers[receiverIndex]
        let beacon = scenario.beacons[beaconIndex]
        let channel = scenario.channel
        let linkIndex = receiverIndex * beaconCount + beaconIndex
        var link = links[linkIndex]
        let (position, heading) = scenario.state(of: receiver, at: time)
        let beaconPosition = scenario.position(of: beacon, at: time)
        if link.initialized {
            // Both ends may move (a walker, a carried beacon): the link decorrelates with either.
            let moved = ((position.x - link.position.x) * (position.x - link.position.x)
                + (position.y - link.position.y) * (position.y - link.position.y)).squareRoot()
                + ((beaconPosition.x - link.beaconPosition.x) * (beaconPosition.x - link.beaconPosition.x)
                + (beaconPosition.y - link.beaconPosition.y) * (beaconPosition.y - link.beaconPosition.y)).squareRoot()
            if moved > 0 && channel.shadowingSigma > 0 {
                let rho = Propagation.shadowingCorrelation(moved: moved, correlationDistance: channel.correlationDistance)
                link.shadow = rho * link.shadow + (1 - rho * rho).squareRoot() * channel.shadowingSigma * radio.gaussian()
            }
        }
        link.initialized = true
        link.position = position
        link.beaconPosition = beaconPosition
        if !scenario.rooms.isEmpty {
            link.receiverRoom = scenario.roomIndex(at: position)
            link.beaconRoom = scenario.roomIndex(at: beaconPosition)
        }
        let distance = beaconPosition.distance(to: position)
        link.distance = distance
        let free = Propagation.meanPower(txPower: beacon.txPower, distance: distance, channel: channel) + receiver.antennaGain
        let presencePower = free - (scenario.venue.walls.isEmpty ? 0 : Propagation.wallLoss(from: beaconPosition, to: position, walls: scenario.venue.walls))
        link.bodyLoss = receiver.body && Propagation.bodyBlocks(phone: position, heading: heading, beacon: beaconPosition) ? channel.bodyLoss : 0
        link.receivedMean = presencePower - link.bodyLoss
        if case .rician(let kNear, let rayleigh, _) = channel.fading {
            link.kFactor = Propagation.kFactor(distance: distance, kFactorNear: kNear, rayleighDistance: rayleigh)
        }
        let inRange = presencePower >= channel.presenceThreshold
        if inRange != link.inRange {
            link.inRange = inRange
            for regionIndex in beaconRegions[beaconIndex] {
                receivers[receiverIndex].regionCounts[regionIndex] += inRange ? 1 : -1
            }
            if !beaconRegions[beaconIndex].isEmpty { receivers[receiverIndex].regionsChanged = true }
        }
        // When to look again. Static receivers never move. A walker's link is revisited after it
        // could have walked 5 % of the distance (at most 10·n·log10(1.05) ≈ 0.5 dB of path loss
        // at n = 2.5), at least every 0.1 s; a link far below anything that matters is revisited
        // only once the walker could have come close enough (ignoring walls, and allowing 3σ of
        // shadowing drift, both of which only make that bound earlier).
        var closingSpeed = beacon.path?.speed ?? 0
        if case .walking(let path) = receiver.placement { closingSpeed += path.speed }
        if closingSpeed == 0 {
            // A fixed beacon that will be moved is looked at again when it is.
            link.nextRefresh = beacon.relocations.first { $0.at > time }?.at ?? .infinity
        } else {
            var wait = max(0.1, 0.05 * distance / closingSpeed)
            let headroom = relevanceFloor - 3 * channel.shadowingSigma - free
            if headroom > 0 {
                let reachable = distance * pow(10, -headroom / (10 * channel.pathLossExponent))
                wait = max(wait, (distance - reachable) / closingSpeed)
            }
            link.nextRefresh = time + wait
        }
        links[linkIndex] = link
        hot[linkIndex].level = link.receivedMean + link.shadow
        hot[linkIndex].fadingTable = fadingTable?.table(forKFactor: link.kFactor) ?? 0
        hot[linkIndex].nextRefresh = link.nextRefresh
    }

    private func frame(of beacon: SimulatedBeacon, index: Int, sequence: UInt32) -> BeaconFrame {
        if beacon.telemetry && sequence % 10 == 0 {
            let millivolts = discharges[index].map { UInt16(max(0, min(65535, $0.millivolts(at: now).rounded()))) } ?? beacon.batteryMillivolts
            return .eddystone(.tlm(EddystoneTelemetry(batteryMillivolts: millivolts, temperatureCelsius: 21,
                                                       advertisingCount: sequence, uptimeDeciseconds: UInt32(min(4e9, now * 10)))))
        }
        return .iBeacon(IBeaconFrame(identity: beacon.rotation?.identity(at: now) ?? beacon.identity, measuredPower: beacon.measuredPower))
    }
}

/// The part of a link the per-packet path reads: 32 bytes.
struct HotLink: Sendable {
    var nextRefresh = 0.0
    /// Mean power with walls, antenna, body and shadowing (dBm), before channel offset and fading.
    var level = -200.0
    var offsets: (Float, Float, Float)
    /// Which of the fading table's distributions (K-factor step) this link draws from.
    var fadingTable: Int32 = 0

    init(offsets: (Float, Float, Float)) { self.offsets = offsets }

    @inline(__always)
    func offset(_ channel: Int) -> Float {
        switch channel {
        case 0: offsets.0
        case 1: offsets.1
        default: offsets.2
        }
    }
}

/// One beacon's advertising event: the same PDU sent on channels 37, 38 and 39 in turn.
struct AdvertisingEvent: Sendable, Hashable {
    var time: Double
    var beacon: Int
    var sequence: UInt32 = 0
}

/// The cached state of one receiver–beacon link.
struct Link: Sendable {
    var shadow: Double
    var channelOffsets: (Double, Double, Double)
    var initialized = false
    var position = Position3D(x: 0, y: 0)
    var beaconPosition = Position3D(x: 0, y: 0)
    /// Indices in `scenario.rooms` of the rooms holding the two ends, when the scenario has rooms.
    var receiverRoom: Int?
    var beaconRoom: Int?
    var distance = 0.0
    /// Mean power with walls, antenna and body, before shadowing and fading.
    var receivedMean = -200.0
    var bodyLoss = 0.0
    var kFactor = 0.0
    var inRange = false
    var nextRefresh = 0.0

    init(shadow: Double, channelOffsets: (Double, Double, Double)) {
        self.shadow = shadow
        self.channelOffsets = channelOffsets
    }

    static let frequencyTerms = (Propagation.frequencyOffset(megahertz: 2402), 0.0, Propagation.frequencyOffset(megahertz: 2480))
}

struct ReceiverState: Sendable {
    var scanPhase: Double
    var regionCounts: [Int]
    var regionsChanged = true
    var cachedNames: [String] = []

    mutating func regionNames(_ regions: [SimulatedRegion]) -> [String] {
        if regionsChanged {
            regionsChanged = false
            cachedNames = regionCounts.indices.filter { regionCounts[$0] > 0 }.map { regions[$0].name }
        }
        return cachedNames
    }
}

/// Advertising events by time: swift-collections' `Heap`, with equal times in the order they
/// were queued so a run does not depend on the heap's layout.
struct EventHeap: Sendable {
    private struct Queued: Comparable, Sendable {
        var event: AdvertisingEvent
        var order: UInt64

        static func < (lhs: Queued, rhs: Queued) -> Bool {
            lhs.event.time != rhs.event.time ? lhs.event.time < rhs.event.time : lhs.order < rhs.order
        }

        static func == (lhs: Queued, rhs: Queued) -> Bool { lhs.order == rhs.order }
    }

    private var items = Heap<Queued>()
    private var queued: UInt64 = 0

    var peek: AdvertisingEvent? { items.min?.event }

    mutating func push(_ event: AdvertisingEvent) {
        items.insert(Queued(event: event, order: queued))
        queued += 1
    }

    mutating func pop() -> AdvertisingEvent? { items.popMin()?.event }
}
