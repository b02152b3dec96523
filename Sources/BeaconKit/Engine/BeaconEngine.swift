/// Region monitoring and beacon ranging with Core Location's meaning, as a deterministic state
/// machine: it reads time only from the sightings and from ``advance(to:)``, and returns events.
///
/// One engine models one receiver, as one phone does: feed it one receiver's sightings (run one
/// engine per receiver to compare receivers). Sightings should arrive in time order; an
/// earlier time than one already seen is treated as "now".
///
/// Per beacon the engine keeps one fixed-size record in a dense array, found through an interned
/// ``BeaconIndex``; the per-packet path does no allocation and no dynamic dispatch.
///
/// A consumer that follows every beacon heard rather than a few regions (a server's gateway)
/// sets ``followsEveryBeacon`` and a ``retention`` policy instead of monitoring one region per
/// beacon: see BeaconEngine+Tracking.swift.
public struct BeaconEngine: Sendable {
    public let configuration: EngineConfiguration
    let hot: HotParameters

    var indexByIdentity = IdentityIndexTable()
    var identities: ContiguousArray<BeaconIdentity> = []
    var beacons: ContiguousArray<TrackedBeacon> = []
    /// Windows of the running trimmed mean, one per beacon, only when that filter is chosen.
    var windows: [RunningTrimmedMean] = []
    private var monitored: [MonitoredRegion] = []
    private var ranged: [BeaconRegion] = []
    /// Last cycle's list sizes, to reserve this cycle's lists once.
    private var listSizeHints: [Int] = []
    /// Reused by the ranging sort.
    private var sortScratch: [(key: Double, position: Int32)] = []
    /// Region indices each beacon matches, monitored then ranged, referenced by start and count.
    /// 32-bit, so no number of regions a caller can start overflows it before memory runs out.
    var matchPool: ContiguousArray<UInt32> = []

    /// Report every beacon's own enters, exits and per-cycle readings (``takeActivity()``),
    /// without a region per beacon.
    public var followsEveryBeacon = false
    /// How many beacons the engine keeps, and whether it forgets silent ones.
    public var retention = BeaconRetention.unbounded
    /// Work done since the engine was made, for tests and metrics.
    public internal(set) var work = EngineWork()
    var pendingActivity = BeaconActivity()
    /// Beacons whose record changed since ``takeChanges()``, each listed once (see `TrackedBeacon.isChanged`).
    var changedIndices: [Int32] = []
    var forgottenSinceTaken: [BeaconIdentity] = []
    var nextForgetSweep: Double = -.infinity
    /// Counts the times records were forgotten and the others moved down: an index looked up
    /// before a change of this is stale.
    var layoutGeneration: UInt32 = 0
    /// The evidence rule's memory of this receiver's dropouts of strong beacons.
    var receiverDropout = ReceiverDropoutMemory()

    /// The latest time the engine has seen.
    public private(set) var now: Double = -.infinity
    private(set) var nextCycleEnd: Double = .infinity
    private(set) var nextExitCheck: Double = -.infinity
    /// min(nextCycleEnd, nextExitCheck): the one comparison the packet path makes.
    private var nextHousekeeping: Double = -.infinity

    public init(configuration: EngineConfiguration = .init()) {
        self.configuration = configuration
        self.hot = HotParameters(configuration)
    }

    // MARK: Regions

    public var monitoredRegions: [BeaconRegion] { monitored.map(\.region) }
    public var rangedRegions: [BeaconRegion] { ranged }

    /// Starts monitoring, replacing a region with the same identifier. The region's state comes
    /// from the beacons present now, without an enter event; with `notifyEntryStateOnStart` the
    /// state is reported at once.
    ///
    /// - Throws: ``MonitoringError/regionLimitExceeded(limit:identifier:)`` when a new
    ///   identifier would exceed ``EngineConfiguration/regionLimit``.
    @discardableResult
    public mutating func startMonitoring(_ region: BeaconRegion, at time: Double? = nil) throws(MonitoringError) -> [BeaconEvent] {
        if let existing = monitored.firstIndex(where: { $0.region.identifier == region.identifier }) {
            monitored[existing].region = region
        } else {
            if let limit = configuration.regionLimit, monitored.count >= limit {
                throw .regionLimitExceeded(limit: limit, identifier: region.identifier)
            }
            monitored.append(MonitoredRegion(region: region))
        }
        rebuildMatches()
        guard region.notifyEntryStateOnStart else { return [] }
        return [try requestState(for: region.identifier, at: time)]
    }

    /// Stops monitoring; returns whether the region was monitored.
    @discardableResult
    public mutating func stopMonitoring(identifier: String) -> Bool {
        guard let index = monitored.firstIndex(where: { $0.region.identifier == identifier }) else { return false }
        monitored.remove(at: index)
        rebuildMatches()
        return true
    }

    /// The region's current state, as a `didDetermineState` event.
    public func requestState(for identifier: String, at time: Double? = nil) throws(MonitoringError) -> BeaconEvent {
        guard let entry = monitored.first(where: { $0.region.identifier == identifier }) else {
            throw .unknownRegion(identifier: identifier)
        }
        return .didDetermineState(entry.state, entry.region, time: time ?? (now.isFinite ? now : 0))
    }

    public func state(for identifier: String) -> RegionState? {
        monitored.first(where: { $0.region.identifier == identifier })?.state
    }

    /// Starts ranging, replacing a ranged region with the same identifier. Each ranging cycle
    /// then reports this region's beacons.
    public mutating func startRanging(_ region: BeaconRegion) {
        if let existing = ranged.firstIndex(where: { $0.identifier == region.identifier }) {
            ranged[existing] = region
        } else {
            ranged.append(region)
        }
        rebuildMatches()
    }

    @discardableResult
    public mutating func stopRanging(identifier: String) -> Bool {
        guard let index = ranged.firstIndex(where: { $0.identifier == identifier }) else { return false }
        ranged.remove(at: index)
        rebuildMatches()
        return true
    }

    // MARK: Beacons

    public var trackedBeaconCount: Int { beacons.count }

    var indexCapacity: Int { indexByIdentity.capacity }
    var matchPoolCount: Int { matchPool.count }
    /// Rough: each window sample is a time and an RSSI in a deque.
    var windowBytes: Int { windows.reduce(0) { $0 + $1.sampleCount * 16 + 32 } }

    /// The dense index of a beacon, creating its record on first sight; nil when the engine is
    /// at its ``BeaconRetention/limit`` and every tracked beacon is present, so none can be
    /// forgotten to make room (counted in ``EngineWork/untrackedSightings`` by ``receive(_:into:)``).
    ///
    /// With a retention policy, indices change when beacons are forgotten: feed sightings through
    /// ``receive(_:into:)``, or intern again after each ``advance(to:into:)``.
    public mutating func intern(_ identity: BeaconIdentity, measuredPower: MeasuredPower) -> BeaconIndex? {
        let key = IdentityKey(identity)
        if let index = indexByIdentity.index(of: key) {
            noteMeasuredPower(measuredPower, of: index)
            return BeaconIndex(rawValue: index)
        }
        if let limit = retention.limit, beacons.count >= limit {
            makeRoom(below: limit)
            if beacons.count >= limit { return nil }
        }
        // Int32 indices: a process runs out of memory long before 2^31 beacon records.
        let index = Int32(beacons.count)
        indexByIdentity.set(index, for: key)
        identities.append(identity)
        beacons.append(TrackedBeacon(measuredPower: measuredPower,
                                     pathLossExponent: configuration.distance.pathLossExponent(for: identity)))
        if case .runningTrimmedMean(let window, let trim) = configuration.filter {
            windows.append(RunningTrimmedMean(window: window, trimFraction: trim))
        }
        appendMatches(for: Int(index))
        return BeaconIndex(rawValue: index)
    }

    /// A beacon's latest advertised power; written only when it changed, so that the record's
    /// cache line stays clean for the usual packet.
    @inline(__always)
    private mutating func noteMeasuredPower(_ power: MeasuredPower, of index: Int32) {
        if beacons[Int(index)].measuredPower != power.dBm { beacons[Int(index)].measuredPower = power.dBm }
    }

    public func index(of identity: BeaconIdentity) -> BeaconIndex? {
        indexByIdentity.index(of: IdentityKey(identity)).map(BeaconIndex.init(rawValue:))
    }

    /// Whether the beacon currently counts as present (entered, not yet exited).
    public func isPresent(_ identity: BeaconIdentity) -> Bool {
        guard let index = indexByIdentity.index(of: IdentityKey(identity)) else { return false }
        return beacons[Int(index)].isPresent
    }

    /// Seconds of silence after which the beacon would exit now, or nil if never heard.
    public func exitTimeout(for identity: BeaconIdentity) -> Double? {
        guard let index = indexByIdentity.index(of: IdentityKey(identity)) else { return nil }
        return exitTimeout(beacons[Int(index)])
    }

    // MARK: Checkpoint support

    mutating func restore(_ index: BeaconIndex, from saved: EngineCheckpoint.Beacon) {
        beacons[Int(index.rawValue)].restore(from: saved)
    }

    /// Sets the clock and recounts the regions' present beacons from the restored records.
    mutating func restoreClock(now: Double?, nextCycleEnd: Double?, nextExitCheck: Double?) {
        self.now = now ?? -.infinity
        self.nextCycleEnd = nextCycleEnd ?? .infinity
        self.nextExitCheck = nextExitCheck ?? -.infinity
        nextHousekeeping = Swift.min(self.nextCycleEnd, self.nextExitCheck)
        rebuildMatches()
    }

    // MARK: Input

    /// Feeds one sighting. Frames other than iBeacon only advance the clock.
    public mutating func receive(_ sighting: Sighting, into events: inout [BeaconEvent]) {
        receive(sighting, lookedUp: -1, in: layoutGeneration, into: &events)
    }

    /// `lookedUp`: the beacon's index found earlier while the records had `generation` as their
    /// layout, or −1 to look it up here.
    @inline(__always)
    mutating func receive(_ sighting: Sighting, lookedUp: Int32, in generation: UInt32, into events: inout [BeaconEvent]) {
        guard case .iBeacon(let frame) = sighting.frame else {
            advance(to: sighting.time, into: &events)
            return
        }
        // Housekeeping first: forgetting beacons moves indices, so none may happen between
        // interning and recording.
        if sighting.time >= nextHousekeeping || (retention.forgetsSilentBeacons && sighting.time >= nextForgetSweep) {
            advance(to: sighting.time, into: &events)
        }
        let index: BeaconIndex
        if lookedUp >= 0 && generation == layoutGeneration {
            noteMeasuredPower(frame.measuredPower, of: lookedUp)
            index = BeaconIndex(rawValue: lookedUp)
        } else {
            guard let interned = intern(frame.identity, measuredPower: frame.measuredPower) else {
                work.untrackedSightings += 1
                return
            }
            index = interned
        }
        record(index, time: sighting.time, rssi: sighting.rssi, into: &events)
    }

    public mutating func receive(_ sighting: Sighting) -> [BeaconEvent] {
        var events: [BeaconEvent] = []
        receive(sighting, into: &events)
        return events
    }

    /// Feeds one packet of an interned beacon: the per-packet hot path. The record is updated in
    /// place (`notePacket(_:at:rssi:receiverDropout:)`): copying its 104 bytes out and back
    /// cost about 10 % of a packet.
    public mutating func record(_ beacon: BeaconIndex, time: Double, rssi: Int8?, into events: inout [BeaconEvent]) {
        if time >= nextHousekeeping { housekeep(to: time, into: &events) }
        let t = Swift.max(time, now)
        now = t
        let index = Int(beacon.rawValue)
        if t > beacons[index].exitDeadline { endSilence(index, at: t, into: &events) }
        if hot.packet.filterKind == .window, let rssi { windows[index].add(rssi: rssi, time: t) }
        // The records and the dropout memory leave `self` during the update (a swap of
        // references, no copy), so that `notePacket` may read the parameters from `self` while
        // it changes them.
        var records = ContiguousArray<TrackedBeacon>()
        swap(&records, &beacons)
        var dropout = receiverDropout
        let outcome = notePacket(&records[index], at: t, rssi: rssi, receiverDropout: &dropout)
        swap(&records, &beacons)
        receiverDropout = dropout
        if outcome.firstChange { changedIndices.append(Int32(index)) }
        if outcome.entered { enter(index, at: t, into: &events) }
    }

    /// A silence longer than the beacon's timeout, seen by a packet or by the exit check: the
    /// exit, or entry evidence that lapsed.
    private mutating func endSilence(_ index: Int, at time: Double, into events: inout [BeaconEvent]) {
        if beacons[index].isPresent {
            exit(index, at: time, into: &events)
        } else if beacons[index].evidence > 0 {
            beacons[index].evidence = 0
            beacons[index].reception.reset()
            beacons[index].presence.resetPattern()
            noteChange(index)
        }
    }

    struct PacketOutcome {
        /// The record was unchanged since the changes were last taken.
        var firstChange: Bool
        /// The packet completed the beacon's entry.
        var entered: Bool
    }

    /// One packet's effect on its beacon's record (all but the trimmed-mean window, which lives
    /// beside the records).
    @inline(__always)
    func notePacket(_ record: inout TrackedBeacon, at t: Double, rssi: Int8?,
                    receiverDropout: inout ReceiverDropoutMemory) -> PacketOutcome {
        // Capped so that a beacon back after hours does not overflow the Kalman prediction.
        let sincePrevious = Swift.min(t - record.lastHeard, 3600)
        if let adaptive = hot.packet.adaptive {
            if record.isPresent || record.evidence > 0 {
                record.reception.addGap(Float(sincePrevious), parameters: adaptive)
            } else if record.reception.hasPattern {
                // Back soon after an exit: in hindsight the exit was a dropout, and the rule
                // remembers it. Back after longer than the ceiling, it was really gone.
                if sincePrevious <= adaptive.ceiling {
                    record.reception.learnDropout(Float(sincePrevious))
                } else {
                    record.reception.reset()
                }
            }
        } else if hot.packet.usesEvidence {
            Self.notePresenceGap(&record, receiverDropout: &receiverDropout, sincePrevious: sincePrevious, at: t, rule: hot.packet.evidenceHot)
            if let rssi { record.presence.addRSSI(rssi, parameters: hot.packet.evidenceHot) }
        }
        record.lastHeard = t
        record.exitDeadline = t + Self.exitTimeout(record, rule: hot.packet, receiverDropout: receiverDropout, now: t)
        let firstChange = !record.isChanged
        record.isChanged = true
        if record.cyclePackets < UInt16.max { record.cyclePackets += 1 }

        if let rssi {
            record.cycleRSSISum += Int32(rssi)
            record.cycleRSSICount &+= record.cycleRSSICount < UInt16.max ? 1 : 0
            switch hot.packet.filterKind {
            case .kalman:
                record.filter.kalmanUpdate(rssi: Float(rssi), elapsed: Float(sincePrevious),
                                           processNoise: hot.packet.processNoise, measurementNoise: hot.packet.measurementNoise)
            case .arma:
                record.filter.armaUpdate(rssi: Float(rssi), coefficient: hot.packet.armaCoefficient)
            case .none:
                record.filter.estimate = Float(rssi)
            case .window:
                break
            }
        }

        var entered = false
        if !record.isPresent {
            record.evidence &+= 1
            if record.evidence >= hot.packet.entryEvidence && Self.hasEntryEvidence(record, rule: hot.packet) {
                record.isPresent = true
                if hot.packet.usesEvidence { record.exitDeadline = t + Self.exitTimeout(record, rule: hot.packet, receiverDropout: receiverDropout, now: t) }
                entered = true
            }
        }
        return PacketOutcome(firstChange: firstChange, entered: entered)
    }

    /// Moves the clock forward: closes every ranging cycle that ended by `time` and reports
    /// beacons whose silence exceeded their exit timeout. Live sources call it about once a
    /// second with the wall clock; replays need not, since every sighting advances the clock.
    public mutating func advance(to time: Double, into events: inout [BeaconEvent]) {
        housekeep(to: time, into: &events)
        forgetSilentBeaconsIfDue()
    }

    /// Closes cycles and checks exits; never forgets a beacon, so indices stay valid.
    private mutating func housekeep(to time: Double, into events: inout [BeaconEvent]) {
        let t = Swift.max(time, now)
        if !now.isFinite {
            nextCycleEnd = t + configuration.rangingCycle
            nextExitCheck = t
        }
        let previous = now
        now = t
        let cycle = configuration.rangingCycle
        // After this, no beacon can be listed or exit: every cycle would be empty.
        let quietAfter = previous + Swift.max(configuration.trackingAge, longestExitTimeout) + cycle
        while nextCycleEnd <= t {
            let end = nextCycleEnd
            checkExits(at: end, into: &events)
            closeCycle(at: end, into: &events)
            nextCycleEnd = end + cycle
            // Past 2^53 seconds adding a cycle no longer moves the time: stop after this cycle
            // rather than loop for ever.
            if nextCycleEnd <= end {
                nextCycleEnd = t.nextUp
                break
            }
            // A long silence in a replay: after one empty cycle, skip to the present.
            if end > quietAfter && t - nextCycleEnd > cycle {
                nextCycleEnd += ((t - nextCycleEnd) / cycle).rounded(.down) * cycle
            }
        }
        if t >= nextExitCheck {
            checkExits(at: t, into: &events)
            nextExitCheck = t + configuration.exitCheckInterval
        }
        nextHousekeeping = Swift.min(nextCycleEnd, nextExitCheck)
    }

    public mutating func advance(to time: Double) -> [BeaconEvent] {
        var events: [BeaconEvent] = []
        advance(to: time, into: &events)
        return events
    }

    // MARK: Monitoring internals

    /// The longest silence the exit rule can allow any beacon before it exits.
    public var longestExitTimeout: Double {
        if let adaptive = hot.packet.adaptive { return adaptive.ceiling }
        if let rule = hot.evidence { return Swift.max(rule.ceiling, rule.confirmationWindow) }
        return hot.packet.fixedDelay
    }

    private func exitTimeout(_ record: TrackedBeacon) -> Double {
        Self.exitTimeout(record, rule: hot.packet, receiverDropout: receiverDropout, now: now)
    }

    @inline(__always)
    static func exitTimeout(_ record: TrackedBeacon, rule: PacketRule, receiverDropout: ReceiverDropoutMemory, now: Double) -> Double {
        if let adaptive = rule.adaptive { return record.reception.timeout(parameters: adaptive) }
        if rule.usesEvidence { return evidenceTimeout(record, rule: rule.evidenceHot, receiverDropout: receiverDropout, now: now) }
        return rule.fixedDelay
    }

    private mutating func checkExits(at time: Double, into events: inout [BeaconEvent]) {
        for index in beacons.indices where time > beacons[index].exitDeadline {
            endSilence(index, at: time, into: &events)
        }
    }

    private mutating func enter(_ index: Int, at time: Double, into events: inout [BeaconEvent]) {
        let record = beacons[index]
        let start = Int(record.monitorMatchStart)
        for slot in start..<(start + Int(record.monitorMatchCount)) {
            let region = Int(matchPool[slot])
            monitored[region].presentCount += 1
            if monitored[region].presentCount == 1 {
                monitored[region].state = .inside
                if monitored[region].region.notifyOnEntry {
                    events.append(.didEnter(monitored[region].region, time: time))
                }
            }
        }
        if followsEveryBeacon {
            pendingActivity.presence.append(BeaconPresenceChange(identity: identities[index], transition: .enter, time: time))
        }
    }

    /// Reports the exit at the moment the silence reached the timeout, whenever it is noticed,
    /// so replays give the same times whatever the tick rate.
    private mutating func exit(_ index: Int, at detection: Double, into events: inout [BeaconEvent]) {
        let time = Swift.min(detection, beacons[index].exitDeadline)
        beacons[index].isPresent = false
        beacons[index].evidence = 0
        noteChange(index)
        // The reception pattern is kept: if the beacon comes back soon, the exit was a dropout
        // and the pattern learns from it (see `record`).
        let record = beacons[index]
        let start = Int(record.monitorMatchStart)
        for slot in start..<(start + Int(record.monitorMatchCount)) {
            let region = Int(matchPool[slot])
            monitored[region].presentCount -= 1
            if monitored[region].presentCount == 0 {
                monitored[region].state = .outside
                if monitored[region].region.notifyOnExit {
                    events.append(.didExit(monitored[region].region, time: time))
                }
            }
        }
        if followsEveryBeacon {
            pendingActivity.presence.append(BeaconPresenceChange(identity: identities[index], transition: .exit, time: time))
        }
    }

    private mutating func appendMatches(for index: Int) {
        let identity = identities[index]
        beacons[index].monitorMatchStart = UInt32(matchPool.count)
        for (regionIndex, entry) in monitored.enumerated() where entry.region.contains(identity) {
            matchPool.append(UInt32(regionIndex))
        }
        beacons[index].monitorMatchCount = UInt32(matchPool.count - Int(beacons[index].monitorMatchStart))
        beacons[index].rangeMatchStart = UInt32(matchPool.count)
        for (regionIndex, region) in ranged.enumerated() where region.contains(identity) {
            matchPool.append(UInt32(regionIndex))
        }
        beacons[index].rangeMatchCount = UInt32(matchPool.count - Int(beacons[index].rangeMatchStart))
    }

    /// Matches every beacon against every region again: only when the regions change, never
    /// for a new beacon (``intern(_:measuredPower:)`` matches the new one alone).
    private mutating func rebuildMatches() {
        work.fullMatchRebuilds += 1
        matchPool.removeAll(keepingCapacity: true)
        for index in beacons.indices { appendMatches(for: index) }
        for region in monitored.indices { monitored[region].presentCount = 0 }
        for record in beacons where record.isPresent {
            let start = Int(record.monitorMatchStart)
            for slot in start..<(start + Int(record.monitorMatchCount)) {
                monitored[Int(matchPool[slot])].presentCount += 1
            }
        }
        for region in monitored.indices {
            monitored[region].state = monitored[region].presentCount > 0 ? .inside : .outside
        }
    }

    // MARK: Ranging internals

    private mutating func closeCycle(at end: Double, into events: inout [BeaconEvent]) {
        if ranged.isEmpty && !followsEveryBeacon {
            resetCycleCounters(at: end)
            return
        }
        var lists = (0..<ranged.count).map { region -> [RangedBeacon] in
            var list: [RangedBeacon] = []
            list.reserveCapacity(region < listSizeHints.count ? listSizeHints[region] : 0)
            return list
        }
        let trackingAge = configuration.trackingAge
        // The records leave `self` for the loop (a swap of references), so that each is updated
        // in place: copying a record out and back made the write-back's wide loads wait on the
        // narrow stores just made to the copy (most of this loop's time in a profile).
        var records = ContiguousArray<TrackedBeacon>()
        swap(&records, &beacons)
        for index in records.indices {
            if end - records[index].lastHeard > trackingAge {
                if records[index].proximity.current != .unknown {
                    records[index].proximity.reset()
                    noteChange(index, of: &records[index])
                }
                continue
            }
            let heard = records[index].cyclePackets > 0
            if records[index].rangeMatchCount > 0 || (heard && followsEveryBeacon) {
                let window = hot.packet.filterKind == .window ? windows[index].estimate : nil
                let ranged = Self.rangedBeacon(&records[index], identity: identities[index], windowEstimate: window, hot: hot)
                let start = Int(records[index].rangeMatchStart)
                for slot in start..<(start + Int(records[index].rangeMatchCount)) {
                    lists[Int(matchPool[slot])].append(ranged)
                }
                if heard && followsEveryBeacon { pendingActivity.readings.append(ranged) }
            }
            // A cycle without packets left the counters at zero and the record unchanged.
            guard heard else { continue }
            records[index].cyclePackets = 0
            records[index].cycleRSSICount = 0
            records[index].cycleRSSISum = 0
            noteChange(index, of: &records[index])
        }
        swap(&records, &beacons)
        listSizeHints = lists.map(\.count)
        for (regionIndex, region) in ranged.enumerated() {
            RangedBeacon.sortInRangingOrder(&lists[regionIndex], scratch: &sortScratch)
            events.append(.didRange(lists[regionIndex], region, time: end))
        }
    }

    /// Without ranged regions a cycle only clears the per-cycle sums and forgets the zones of
    /// beacons past the tracking age.
    private mutating func resetCycleCounters(at end: Double) {
        let trackingAge = configuration.trackingAge
        for index in beacons.indices {
            if beacons[index].cyclePackets != 0 {
                beacons[index].cyclePackets = 0
                beacons[index].cycleRSSICount = 0
                beacons[index].cycleRSSISum = 0
                noteChange(index)
            }
            if end - beacons[index].lastHeard > trackingAge && beacons[index].proximity.current != .unknown {
                beacons[index].proximity.reset()
                noteChange(index)
            }
        }
    }

    /// Static, with what it reads passed in: as a method it made the compiler copy the whole
    /// engine (904 bytes) for each ranged beacon, since the loop changes `self` around it.
    private static func rangedBeacon(_ record: inout TrackedBeacon, identity: BeaconIdentity, windowEstimate: Double?,
                                     hot: HotParameters) -> RangedBeacon {
        let power = MeasuredPower(record.measuredPower)
        let heard = record.cyclePackets > 0
        var accuracy = -1.0
        var proximity = Proximity.unknown
        var rssi = 0
        if heard && record.cycleRSSICount > 0 {
            rssi = Int((Double(record.cycleRSSISum) / Double(record.cycleRSSICount)).rounded())
            let exponent: Double? = record.pathLossExponent.isNaN ? nil : Double(record.pathLossExponent)
            let filtered = hot.packet.filterKind == .window ? windowEstimate
                : record.filter.hasEstimate ? Double(record.filter.estimate) : nil
            let distance = filtered.flatMap {
                hot.distance(rssi: $0, measuredPower: power, pathLossExponent: exponent)
            }
            proximity = record.proximity.update(distance: distance, zones: hot.zones)
            accuracy = distance ?? -1
        }
        return RangedBeacon(identity: identity, proximity: proximity, accuracy: accuracy, rssi: rssi,
                            measuredPower: power, timestamp: record.lastHeard, packetCount: Int(record.cyclePackets))
    }
}

/// The intern table's key: the identity as three integers, which hash faster than `UUID`.
struct IdentityKey: Hashable, Comparable, Sendable {
    var high: UInt64
    var low: UInt64
    var majorMinor: UInt32

    /// The UUID's bytes read as two big-endian words, so that the key orders as the bytes do.
    @inline(__always)
    init(_ identity: BeaconIdentity) {
        (high, low) = withUnsafeBytes(of: identity.uuid.uuid) { bytes in
            (UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
             UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
        majorMinor = UInt32(identity.major) << 16 | UInt32(identity.minor)
    }
}

extension IdentityKey {
    /// The same order as `BeaconIdentity`'s (UUID text, major, minor), without building strings:
    /// hexadecimal text of bytes sorts as the bytes do.
    static func < (lhs: IdentityKey, rhs: IdentityKey) -> Bool {
        (lhs.high, lhs.low, lhs.majorMinor) < (rhs.high, rhs.low, rhs.majorMinor)
    }
}
