import BeaconKit
import Foundation

/// One gateway's monitoring and ranging, and the per-batch step of ingestion: a value with no
/// database, no clock and no I/O. ``IngestService`` loads it, calls ``step(_:now:)`` and saves
/// what the step says changed. Work that later runs on every batch (positions, fleet checks,
/// applications) belongs in ``step(_:now:)`` too, with its state beside the engine.
///
/// The engine is BeaconKit's (the one `proxima monitor` runs), following every beacon the
/// gateway hears (``BeaconEngine/followsEveryBeacon``) instead of a region per beacon, with
/// ``GatewaySettings/beaconLimit`` on the beacons it keeps, so a batch costs the same whether the
/// gateway has heard ten identities or a million.
public struct GatewayMonitor: Sendable {
    public typealias Transition = BeaconPresenceChange.Transition

    public struct Change: Sendable, Hashable {
        public var identity: BeaconIdentity
        public var transition: Transition
        public var time: Double
    }

    public struct Reading: Sendable, Hashable {
        public var identity: BeaconIdentity
        /// Mean RSSI of the last ranging cycle in which the beacon was heard.
        public var rssi: Double
        /// The engine's accuracy in metres; nil when unknown.
        public var distance: Double?
        public var proximity: String
        public var time: Double
    }

    public let settings: GatewaySettings
    public private(set) var engine: BeaconEngine
    public private(set) var recentSequences: RecentSequences

    public init(settings: GatewaySettings = GatewaySettings()) {
        self.settings = settings
        self.engine = settings.makeEngine(BeaconEngine(configuration: settings.engineConfiguration))
        self.recentSequences = RecentSequences()
    }

    /// A monitor continuing from a saved header and the gateway's saved beacon records.
    public init(settings: GatewaySettings, header: GatewayCheckpointHeader, beacons: [EngineCheckpoint.Beacon]) throws(CheckpointError) {
        self.settings = settings
        let engine = try BeaconEngine(configuration: settings.engineConfiguration, restoring: header.engine.adding(beacons))
        self.engine = settings.makeEngine(engine)
        self.recentSequences = header.recentSequences
    }

    /// What the database keeps in the gateway's one header row.
    public var header: GatewayCheckpointHeader {
        GatewayCheckpointHeader(engine: engine.checkpointHeader, recentSequences: recentSequences)
    }

    /// The per-batch step: a batch whose sequence was among the recent ones is a retry and
    /// changes nothing; otherwise the sightings go through the engine.
    ///
    /// - Parameter now: the server's clock, for work that compares the batch with the present.
    ///   The sightings' own times drive the engine.
    public mutating func step(_ batch: SightingBatch, now: Double) -> StepOutcome {
        guard admit(sequence: batch.sequence) else { return StepOutcome(duplicate: true) }
        let work = engine.work
        let (changes, readings) = apply(batch.sightings)
        return StepOutcome(duplicate: false, changes: changes, readings: readings, saved: engine.takeChanges(),
                           forgottenBeacons: engine.work.beaconsForgotten - work.beaconsForgotten,
                           untrackedSightings: engine.work.untrackedSightings - work.untrackedSightings)
    }

    /// False for a batch whose sequence is among the recent ones (a retry); otherwise the
    /// sequence is remembered. An edge batch (``EdgeBatch``) is checked here without a step.
    public mutating func admit(sequence: Int?) -> Bool {
        guard let sequence else { return true }
        guard !recentSequences.contains(sequence) else { return false }
        recentSequences.insert(sequence)
        return true
    }

    /// What one batch did, and what the database must save for it.
    public struct StepOutcome: Sendable {
        public var duplicate: Bool
        /// Enters and exits in time order (exits dated when the exit rule ran out).
        public var changes: [Change] = []
        /// The latest reading of each beacon ranged during the batch.
        public var readings: [Reading] = []
        /// Beacon records to write and delete: those the batch touched, not all of them.
        public var saved = EngineChanges()
        public var forgottenBeacons = 0
        public var untrackedSightings = 0

        public init(duplicate: Bool, changes: [Change] = [], readings: [Reading] = [], saved: EngineChanges = EngineChanges(),
                    forgottenBeacons: Int = 0, untrackedSightings: Int = 0) {
            self.duplicate = duplicate
            self.changes = changes
            self.readings = readings
            self.saved = saved
            self.forgottenBeacons = forgottenBeacons
            self.untrackedSightings = untrackedSightings
        }
    }

    /// Feeds sightings in time order and advances the engine to the last one. Does not look at
    /// sequences or save anything: for tests and for replaying a stream in memory.
    public mutating func apply(_ sightings: [Sighting]) -> (changes: [Change], readings: [Reading]) {
        var events: [BeaconEvent] = []
        // Gateways post in time order, so the copy and sort are only paid for a batch that is not.
        // By index: comparing times this way copies no sighting (a zip copied each one twice).
        let inOrder = sightings.indices.dropFirst().allSatisfy { sightings[$0 - 1].time <= sightings[$0].time }
        let ordered = inOrder ? sightings : sightings.sorted(by: { $0.time < $1.time })
        for index in ordered.indices {
            engine.receive(ordered[index], into: &events)
        }
        if let latest = ordered.last?.time { engine.advance(to: latest, into: &events) }
        let activity = engine.takeActivity()
        // In time order, then by identity: exits found in one sweep come in the engine's record
        // order, which differs between an engine and one restored from its rows.
        let changes = activity.presence.sorted { ($0.time, $0.identity) < ($1.time, $1.identity) }
            .map { Change(identity: $0.identity, transition: $0.transition, time: $0.time) }
        var readings: [BeaconIdentity: Reading] = [:]
        for beacon in activity.readings {
            readings[beacon.identity] = Reading(identity: beacon.identity, rssi: Double(beacon.rssi),
                                                distance: beacon.accuracy >= 0 ? beacon.accuracy : nil,
                                                proximity: beacon.proximity.description, time: beacon.timestamp)
        }
        return (changes, readings.values.sorted { $0.identity < $1.identity })
    }
}

/// How the server runs each gateway's engine.
public struct GatewaySettings: Sendable, Hashable {
    /// When a silent beacon exits.
    public var exitRule: ExitRule
    /// The most beacons one gateway's engine keeps (see ``BeaconRetention/limit``). At about
    /// 150 bytes a beacon in memory and 400 bytes a row in the database, 10,000 is 1.5 MB and
    /// 4 MB per gateway.
    public var beaconLimit: Int

    public static let defaultBeaconLimit = 10_000

    public init(exitRule: ExitRule = .default, beaconLimit: Int = Self.defaultBeaconLimit) {
        self.exitRule = exitRule
        self.beaconLimit = max(1, beaconLimit)
    }

    var engineConfiguration: EngineConfiguration {
        EngineConfiguration(exitRule: exitRule)
    }

    func makeEngine(_ engine: BeaconEngine) -> BeaconEngine {
        var engine = engine
        engine.followsEveryBeacon = true
        engine.retention = BeaconRetention(limit: beaconLimit, forgetsSilentBeacons: true)
        return engine
    }
}

/// A gateway's checkpoint apart from its beacons: the engine's clock and the recent sequences.
public struct GatewayCheckpointHeader: Sendable, Hashable, Codable {
    public var engine: EngineCheckpoint
    public var recentSequences: RecentSequences

    public init(engine: EngineCheckpoint, recentSequences: RecentSequences) {
        self.engine = engine
        self.recentSequences = recentSequences
    }
}

/// The sequence numbers of a gateway's last batches. A batch whose sequence is among them is
/// a retry; any other is new, whether higher or lower, so no one sequence (however large) can
/// shut a gateway out, and a gateway that restarts need only avoid its last few numbers.
public struct RecentSequences: Sendable, Hashable, Codable {
    public static let capacity = 64
    /// Oldest first.
    public private(set) var values: [Int] = []

    public init() {}

    public func contains(_ sequence: Int) -> Bool { values.contains(sequence) }

    public mutating func insert(_ sequence: Int) {
        values.append(sequence)
        if values.count > Self.capacity { values.removeFirst(values.count - Self.capacity) }
    }

    public init(from decoder: any Decoder) throws {
        values = Array(try decoder.singleValueContainer().decode([Int].self).suffix(Self.capacity))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}
