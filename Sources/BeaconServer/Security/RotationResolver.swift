import BeaconFleet
import BeaconGateway
import BeaconKit
import BeaconRotation
import Foundation
import SQLKit
import Synchronization

/// What a rotated identity turned out to be.
public struct RotationMatch: Sendable, Hashable, Codable {
    public var beaconID: Int
    /// The beacon's identity in the registry, which events, ranging and fleet checks use.
    public var registered: BeaconIdentity
    /// The period the heard identity belongs to.
    public var period: Int64
    /// `current`, `next`, `previousWithinGrace`, `replay` or `future`.
    public var window: String
    public var resolves: Bool

    init(beaconID: Int, registered: BeaconIdentity, period: Int64, verdict: RotationVerdict) {
        self.beaconID = beaconID
        self.registered = registered
        self.period = period
        resolves = verdict.resolves
        window = switch verdict {
        case .current: "current"
        case .next: "next"
        case .previousWithinGrace: "previousWithinGrace"
        case .replay: "replay"
        case .future: "future"
        }
    }
}

/// Maps rotated identities to registered beacons through an in-memory ``RotationIndex``: one
/// dictionary lookup per sighting. The index is rebuilt from the database at the next period
/// boundary and whenever the registry generation moves (a key set or removed by any instance
/// sharing the database moves it).
public final class RotationResolver: Sendable {
    struct Snapshot: Sendable {
        var index: RotationIndex<Int>
        var registered: [Int: BeaconIdentity]
        var generation: Int
    }

    let secret: ServerSecret?
    let registry: RegistrySnapshots
    private let snapshot = Mutex<Snapshot?>(nil)

    init(secret: ServerSecret?, registry: RegistrySnapshots) {
        self.secret = secret
        self.registry = registry
    }

    /// The index for server time `now` from the registry snapshot, rebuilt when the period
    /// turned or the snapshot is newer than the one it was built from.
    func current(now: Double, registry: RegistrySnapshot) throws -> Snapshot? {
        guard let secret else { return nil }
        if let fresh = snapshot.withLock({ $0 }), !fresh.index.isStale(at: now), fresh.generation >= registry.generation {
            return fresh
        }
        let beacons = try registry.rotations.map { try $0.opened(with: secret) }
        let built = Snapshot(index: RotationIndex(beacons.map { ($0.beaconID, $0.rotating) }, at: now),
                             registered: Dictionary(beacons.map { ($0.beaconID, $0.registered) }, uniquingKeysWith: { first, _ in first }),
                             generation: registry.generation)
        snapshot.withLock { $0 = built }
        return built
    }

    /// The beacon behind `identity` heard at `time`, resolved or not; nil when it is no
    /// rotating beacon's identity.
    func match(_ identity: BeaconIdentity, at time: Double, now: Double) async throws -> RotationMatch? {
        guard let snapshot = try current(now: now, registry: try await registry.current()) else { return nil }
        return snapshot.match(identity, at: time)
    }

    /// The batch with every resolving rotated identity replaced by its beacon's registered
    /// identity, and the rotated identities that must not resolve (replays), at most one per
    /// beacon. Replays keep their heard identity, so they stay unknown to the engine.
    func translate(_ batch: SightingBatch, now: Double, registry: RegistrySnapshot) throws -> (SightingBatch, [RotationReplay]) {
        guard let snapshot = try current(now: now, registry: registry), snapshot.index.count > 0 else { return (batch, []) }
        var translated = batch
        var replays: [Int: RotationReplay] = [:]
        for index in translated.sightings.indices {
            guard case .iBeacon(var frame) = translated.sightings[index].frame,
                  let match = snapshot.match(frame.identity, at: translated.sightings[index].time) else { continue }
            if match.resolves {
                frame.identity = match.registered
                translated.sightings[index].frame = .iBeacon(frame)
            } else if replays[match.beaconID] == nil {
                replays[match.beaconID] = RotationReplay(match: match, heard: frame.identity, heardBy: translated.sightings[index].receiver,
                                                         heardAt: translated.sightings[index].time)
            }
        }
        return (translated, replays.values.sorted { $0.match.beaconID < $1.match.beaconID })
    }
}

extension RotationResolver.Snapshot {
    func match(_ identity: BeaconIdentity, at time: Double) -> RotationMatch? {
        guard let found = index.match(identity, at: time), let registered = registered[found.beacon] else { return nil }
        return RotationMatch(beaconID: found.beacon, registered: registered, period: found.period, verdict: found.verdict)
    }
}

/// A rotated identity heard outside its window: a recording played back, or a clock far off.
struct RotationReplay: Sendable, Codable {
    var match: RotationMatch
    var heard: BeaconIdentity
    /// The receiver that heard it, and when (gateway clock).
    var heardBy: String
    var heardAt: Double

    var reason: String {
        let periods = match.window == "future" ? "a period more than one ahead" : "period \(match.period), no longer current"
        return "rotated identity \(heard.major):\(heard.minor) of beacon \(match.beaconID) is from \(periods); "
            + "heard by \(heardBy) at \(Date(timeIntervalSince1970: heardAt).formatted(.iso8601)): a replay, not resolved"
    }
}

extension Store {
    /// One `rotationReplay` alert per replayed beacon, on the registered beacon, with its event.
    static func raiseReplayAlerts(_ replays: [RotationReplay], gatewayID: String, now: Double, db: any SQLDatabase) async throws -> [StoredEvent] {
        var places: [BeaconIdentity: FleetSubjectPlace] = [:]
        for replay in replays {
            let resolved = try await resolve(replay.match.registered, db: db)
            places[replay.match.registered] = FleetSubjectPlace(siteID: resolved?.siteID, label: resolved?.label ?? replay.match.registered.description,
                                                                gatewayID: gatewayID)
        }
        let transitions = replays.map {
            FleetTransition(subject: .beacon($0.match.registered), check: .rotationReplay, from: .ok, to: .alert, reason: $0.reason, time: $0.heardAt)
        }
        let known = places
        return try await storeFleetTransitions(transitions, place: { subject in
            if case .beacon(let identity) = subject, let place = known[identity] { return place }
            return FleetSubjectPlace(siteID: nil, label: subject.description, gatewayID: gatewayID)
        }, now: now, db: db)
    }
}
