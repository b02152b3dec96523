import BeaconKit
import Foundation

/// One gateway's monitoring and ranging: BeaconKit's engine (the same one `proxima monitor` and
/// `proxima range` run), with one exact region per beacon identity the gateway has heard and
/// one ranged region per proximity UUID. It takes batches and returns enters, exits and the
/// latest ranging readings, and it is `Codable` through ``EngineCheckpoint`` so the database
/// can keep it and any server instance can take the gateway over.
public struct GatewayMonitor: Sendable, Equatable, Codable {
    public enum Transition: String, Sendable, Hashable, Codable { case enter, exit }

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

    /// A fixed exit delay in seconds, or nil for the engine's adaptive exit rule.
    public let exitAfter: Double?
    private var engine: BeaconEngine

    public init(exitAfter: Double? = nil) {
        self.exitAfter = exitAfter
        self.engine = BeaconEngine(configuration: Self.configuration(exitAfter: exitAfter))
    }

    static func configuration(exitAfter: Double?) -> EngineConfiguration {
        EngineConfiguration(exitRule: exitAfter.map { .fixedDelay(seconds: $0) } ?? .default)
    }

    static func regionIdentifier(_ identity: BeaconIdentity) -> String {
        "\(identity.uuid.uuidString):\(identity.major):\(identity.minor)"
    }

    /// Feeds one batch in time order. Returns enters and exits in time order (exits dated when
    /// the exit rule ran out) and the latest reading of each beacon ranged during the batch.
    public mutating func apply(_ sightings: [Sighting]) -> (changes: [Change], readings: [Reading]) {
        var events: [BeaconEvent] = []
        var latest: Double?
        for sighting in sightings.sorted(by: { $0.time < $1.time }) {
            if let frame = sighting.frame.iBeacon { watch(frame.identity) }
            engine.receive(sighting, into: &events)
            latest = sighting.time
        }
        if let latest { engine.advance(to: latest, into: &events) }

        var changes: [Change] = []
        var readings: [BeaconIdentity: Reading] = [:]
        for event in events {
            switch event {
            case .didEnter(let region, let time):
                if let identity = Self.identity(of: region) { changes.append(Change(identity: identity, transition: .enter, time: time)) }
            case .didExit(let region, let time):
                if let identity = Self.identity(of: region) { changes.append(Change(identity: identity, transition: .exit, time: time)) }
            case .didRange(let beacons, _, _):
                for beacon in beacons where beacon.packetCount > 0 {
                    readings[beacon.identity] = Reading(identity: beacon.identity, rssi: Double(beacon.rssi),
                                                        distance: beacon.accuracy >= 0 ? beacon.accuracy : nil,
                                                        proximity: beacon.proximity.description, time: beacon.timestamp)
                }
            case .didDetermineState:
                break
            }
        }
        let ordered = readings.values.sorted { Self.regionIdentifier($0.identity) < Self.regionIdentifier($1.identity) }
        return (changes, ordered)
    }

    /// Starts monitoring a newly heard identity, and ranging its UUID.
    private mutating func watch(_ identity: BeaconIdentity) {
        guard engine.index(of: identity) == nil else { return }
        let exact = Self.regionIdentifier(identity)
        // The engine has no region limit here, and an exact region is always valid.
        _ = try? engine.startMonitoring(BeaconRegion(identifier: exact, uuid: identity.uuid,
                                                     major: identity.major, minor: identity.minor))
        let byUUID = identity.uuid.uuidString
        if !engine.rangedRegions.contains(where: { $0.identifier == byUUID }), let region = try? BeaconRegion(identifier: byUUID, uuid: identity.uuid) {
            engine.startRanging(region)
        }
    }

    private static func identity(of region: BeaconRegion) -> BeaconIdentity? {
        guard let major = region.major, let minor = region.minor else { return nil }
        return BeaconIdentity(uuid: region.uuid, major: major, minor: minor)
    }

    // MARK: Codable and Equatable through the engine's checkpoint

    private enum CodingKeys: String, CodingKey { case exitAfter, engine }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        exitAfter = try container.decodeIfPresent(Double.self, forKey: .exitAfter)
        let checkpoint = try container.decode(EngineCheckpoint.self, forKey: .engine)
        do {
            engine = try BeaconEngine(configuration: Self.configuration(exitAfter: exitAfter), restoring: checkpoint)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .engine, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(exitAfter, forKey: .exitAfter)
        try container.encode(engine.checkpoint, forKey: .engine)
    }

    public static func == (lhs: GatewayMonitor, rhs: GatewayMonitor) -> Bool {
        lhs.exitAfter == rhs.exitAfter && lhs.engine.checkpoint == rhs.engine.checkpoint
    }
}
