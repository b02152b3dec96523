/// Everything a ``BeaconEngine`` knows, as a `Codable` value, so a server can keep each
/// gateway's engine in its database and any instance can take the gateway over.
///
/// The configuration is not part of it: restore with the configuration the deployment uses.
/// Windows of the running trimmed mean are not kept (they refill within 20 s); Kalman and ARMA
/// state is. Non-finite times and not-yet-known statistics are `null`.
public struct EngineCheckpoint: Codable, Sendable, Hashable {
    public static let currentVersion = 1
    public var version: Int
    var now: Double?
    var nextCycleEnd: Double?
    var nextExitCheck: Double?
    var beacons: [Beacon]
    var monitored: [Monitored]
    var ranged: [BeaconRegion]
    /// The evidence rule's receiver dropout memory (absent in older checkpoints).
    var receiverDropout: Float?
    var receiverDropoutLearnedAt: Double?

    public var beaconCount: Int { beacons.count }

    /// The clock and regions alone. A server keeps this header in one row and each beacon in
    /// a row of its own, so a batch writes the header and the beacons it touched.
    public var header: EngineCheckpoint {
        var header = self
        header.beacons = []
        return header
    }

    /// This header with the given beacons, as saved one by one.
    public func adding(_ beacons: [Beacon]) -> EngineCheckpoint {
        var checkpoint = self
        checkpoint.beacons += beacons
        return checkpoint
    }

    /// One beacon's record.
    public struct Beacon: Codable, Sendable, Hashable {
        public internal(set) var identity: BeaconIdentity
        var measuredPower: Int8
        var lastHeard: Double?
        var exitDeadline: Double?
        var meanGap: Float?
        var gapDeviation: Float
        var recentDropout: Float?
        var estimate: Float?
        var variance: Float
        var cycleRSSISum: Int32
        var cycleRSSICount: UInt16
        var cyclePackets: UInt16
        var evidence: UInt16
        var isPresent: Bool
        var proximity: UInt8
        var candidate: UInt8
        var candidateCycles: UInt8
        /// The evidence rule's state (absent in older checkpoints and for the other rules).
        var evidenceGap: Float?
        var evidencePeriod: Float?
        var evidenceLongestGap: Float?
        var evidenceMargin: Float?
        var evidenceDropout: Float?
        var evidenceGapCount: UInt16?
        var evidenceModel: Float?
        var evidenceSinceRefresh: UInt8?
    }

    struct Monitored: Codable, Sendable, Hashable {
        var region: BeaconRegion
        var state: RegionState
    }
}

/// A checkpoint that cannot be restored.
public struct CheckpointError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var description: String { "engine checkpoint: \(reason)" }
}

extension BeaconEngine {
    public var checkpoint: EngineCheckpoint {
        checkpointHeader.adding(beacons.indices.map(savedBeacon))
    }

    /// ``checkpoint`` without the beacons (see ``EngineCheckpoint/header``), built without
    /// visiting them.
    public var checkpointHeader: EngineCheckpoint {
        func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
        return EngineCheckpoint(
            version: EngineCheckpoint.currentVersion, now: finite(now), nextCycleEnd: finite(nextCycleEnd),
            nextExitCheck: finite(nextExitCheck), beacons: [],
            monitored: monitoredRegions.map { EngineCheckpoint.Monitored(region: $0, state: state(for: $0.identifier) ?? .outside) },
            ranged: rangedRegions,
            receiverDropout: receiverDropout.silence > 0 ? receiverDropout.silence : nil,
            receiverDropoutLearnedAt: receiverDropout.silence > 0 ? finite(receiverDropout.learnedAt) : nil)
    }

    func savedBeacon(_ index: Int) -> EngineCheckpoint.Beacon {
        func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
        let record = beacons[index]
        let (candidate, candidateCycles) = record.proximity.savedCandidate
        return EngineCheckpoint.Beacon(
            identity: identities[index], measuredPower: record.measuredPower,
            lastHeard: finite(record.lastHeard), exitDeadline: finite(record.exitDeadline),
            meanGap: record.reception.meanGap.isNaN ? nil : record.reception.meanGap,
            gapDeviation: record.reception.gapDeviation,
            recentDropout: record.reception.recentDropout,
            estimate: record.filter.hasEstimate ? record.filter.estimate : nil, variance: record.filter.variance,
            cycleRSSISum: record.cycleRSSISum, cycleRSSICount: record.cycleRSSICount,
            cyclePackets: record.cyclePackets, evidence: record.evidence, isPresent: record.isPresent,
            proximity: record.proximity.current.rawValue, candidate: candidate.rawValue, candidateCycles: candidateCycles,
            evidenceGap: record.presence.hasPattern ? record.presence.meanGap : nil,
            evidencePeriod: record.presence.hasPattern ? record.presence.period : nil,
            evidenceLongestGap: record.presence.longestGap != 0 ? record.presence.longestGap : nil,
            evidenceMargin: record.presence.signalMargin.isNaN ? nil : record.presence.signalMargin,
            evidenceDropout: record.presence.recentDropout != 0 ? record.presence.recentDropout : nil,
            evidenceGapCount: record.presence.gapCount != 0 ? record.presence.gapCount : nil,
            evidenceModel: record.presence.model.isNaN ? nil : record.presence.model,
            evidenceSinceRefresh: record.presence.sinceRefresh != 0 ? record.presence.sinceRefresh : nil)
    }

    /// An engine that continues where the checkpointed one stopped, with nothing yet to take
    /// from ``takeChanges()``. Restored without a retention policy: set one afterwards.
    public init(configuration: EngineConfiguration = .init(), restoring checkpoint: EngineCheckpoint) throws(CheckpointError) {
        guard checkpoint.version == EngineCheckpoint.currentVersion else {
            throw CheckpointError(reason: "expected version \(EngineCheckpoint.currentVersion), found \(checkpoint.version)")
        }
        self.init(configuration: configuration)
        for region in checkpoint.monitored {
            do { try startMonitoring(region.region) } catch {
                throw CheckpointError(reason: "region '\(region.region.identifier)': \(error.description)")
            }
        }
        for region in checkpoint.ranged { startRanging(region) }
        for saved in checkpoint.beacons {
            // Without a retention limit interning always finds room.
            guard let index = intern(saved.identity, measuredPower: MeasuredPower(saved.measuredPower)) else { continue }
            restore(index, from: saved)
        }
        if let silence = checkpoint.receiverDropout, let learnedAt = checkpoint.receiverDropoutLearnedAt {
            receiverDropout = ReceiverDropoutMemory(silence: silence, learnedAt: learnedAt)
        }
        restoreClock(now: checkpoint.now, nextCycleEnd: checkpoint.nextCycleEnd, nextExitCheck: checkpoint.nextExitCheck)
        _ = takeChanges()
    }
}

extension TrackedBeacon {
    mutating func restore(from saved: EngineCheckpoint.Beacon) {
        lastHeard = saved.lastHeard ?? -.infinity
        exitDeadline = saved.exitDeadline ?? -.infinity
        if let meanGap = saved.meanGap {
            reception = ReceptionStatistics(meanGap: meanGap, gapDeviation: saved.gapDeviation,
                                            recentDropout: saved.recentDropout ?? 0)
        }
        if let gap = saved.evidenceGap, let period = saved.evidencePeriod {
            presence.meanGap = gap
            presence.period = period
        }
        presence.longestGap = saved.evidenceLongestGap ?? 0
        presence.signalMargin = saved.evidenceMargin ?? .nan
        presence.recentDropout = saved.evidenceDropout ?? 0
        presence.gapCount = saved.evidenceGapCount ?? (saved.evidenceGap != nil ? 1 : 0)
        presence.model = saved.evidenceModel ?? .nan
        presence.sinceRefresh = saved.evidenceSinceRefresh ?? 0
        filter.estimate = saved.estimate ?? .nan
        filter.variance = saved.variance
        cycleRSSISum = saved.cycleRSSISum
        cycleRSSICount = saved.cycleRSSICount
        cyclePackets = saved.cyclePackets
        evidence = saved.evidence
        isPresent = saved.isPresent
        proximity = ProximityTracker(current: Proximity(rawValue: saved.proximity) ?? .unknown,
                                     candidate: Proximity(rawValue: saved.candidate) ?? .unknown,
                                     candidateCycles: saved.candidateCycles)
    }
}
