import BeaconFleet
import BeaconKit
import BeaconSecurity
import Foundation
import SQLKit
import Synchronization

/// The server's side of spoof and replay detection (docs/security.md, "In the server"): one
/// ``SecurityDetector`` per site, fed every sighting ingestion accepts, stamped with the
/// server's clock at arrival. Each alert a detector raises opens a fleet alert (check named after
/// the detector's kind) whose `alertRaised` event goes out like every fleet event; an alert the
/// detector has not raised again for `quietPeriod` seconds is cleared.
///
/// The detectors live in this instance's memory: at most `siteLimit` of them (the least recently
/// fed is dropped), each bounded by its ``SecuritySettings`` capacities. The sites are built from
/// each newer registry snapshot (``RegistrySnapshots``).
public final class SecurityTracking: Sendable {
    public let settings: SecuritySettings
    public let siteLimit: Int
    /// Seconds without a new raise after which an open alert is cleared. Longer than the
    /// detector's holdoff, so a continuing attack (raised again every holdoff) stays open.
    public let quietPeriod: Double
    /// Most open alerts remembered for clearing; past it the oldest is left open for an operator.
    static let openLimit = 10_000
    let clock: @Sendable () -> Double
    private let state: Mutex<State>
    /// Keeps raise-and-store and clear-and-store in order: a clear is never stored before its raise.
    private let storing = AsyncMutex()

    private struct State: Sendable {
        var registry = SecurityRegistry()
        var appliedGeneration = 0
        var appliedRows = AppliedOutboxRows()
        var detectors: [Int: SiteDetector] = [:]
        var open: [OpenKey: OpenAlert] = [:]
    }

    private struct SiteDetector: Sendable {
        var detector: SecurityDetector
        var lastFed: Double
    }

    struct OpenKey: Hashable, Sendable {
        var subject: FleetSubject
        var check: FleetCheck
    }

    struct OpenAlert: Sendable {
        var lastRaised: Double
        var reason: String
        var place: FleetSubjectPlace
    }

    public init(settings: SecuritySettings = SecurityTracking.serverSettings, siteLimit: Int = 64, quietPeriod: Double = 900,
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.settings = settings
        self.siteLimit = max(1, siteLimit)
        self.quietPeriod = max(settings.alertHoldoff * 2, quietPeriod)
        self.clock = clock
        state = Mutex(State())
    }

    /// The library's thresholds with per-site capacities sized for many sites in one process.
    public static var serverSettings: SecuritySettings {
        var settings = SecuritySettings()
        settings.identityCapacity = 5_000
        settings.receiverCapacity = 1_000
        settings.pairCapacity = 20_000
        return settings
    }

    /// Sites with a detector, and each detector's remembered identities, receivers, pairs and
    /// phones, for tests and metrics.
    public var trackedCounts: [Int: (identities: Int, receivers: Int, pairs: Int, raised: Int, phones: Int)] {
        state.withLock { state in state.detectors.mapValues { $0.detector.trackedCounts } }
    }

    public var openAlertCount: Int { state.withLock { $0.open.count } }

    /// Whether the checks know `identity` as a deployed beacon of a site (for tests).
    func knows(_ identity: BeaconIdentity) -> Bool { state.withLock { $0.registry.beaconPlaces[identity] != nil } }

    /// Builds the sites from a newer registry snapshot; a detector keeps its learnt state unless
    /// its site's beacons or gateways changed. An older or the same snapshot is ignored.
    func apply(_ snapshot: RegistrySnapshot) throws {
        guard snapshot.generation > state.withLock({ $0.appliedGeneration }) else { return }
        let registry = try SecurityRegistry(snapshot.fleet, settings: settings)
        state.withLock { state in
            guard snapshot.generation > state.appliedGeneration else { return }
            for siteID in Array(state.detectors.keys) {
                if let site = registry.sites[siteID] { state.detectors[siteID]?.detector.update(site: site) } else {
                    state.detectors.removeValue(forKey: siteID)
                }
            }
            state.registry = registry
            state.appliedGeneration = snapshot.generation
        }
    }

    /// Checks an accepted batch's sightings with the server's arrival time and stores what they
    /// raised. Gateways without a site are checked by no detector.
    /// What it raises and clears is stored through `db`, in the caller's transaction.
    func observe(gatewayID: String, sightings: [Sighting], serverTime: Double, registry snapshot: RegistrySnapshot,
                 outboxID: Int? = nil, db: any SQLDatabase) async throws -> [StoredEvent] {
        let raised = try check(gatewayID: gatewayID, sightings: sightings, serverTime: serverTime, registry: snapshot, outboxID: outboxID)
        return try await store(raised: raised, gatewayID: gatewayID, db: db)
    }

    /// Runs the site's detector on the sightings, in memory (no database), and returns the alerts
    /// they raised; ``store(raised:gatewayID:db:)`` stores them.
    func check(gatewayID: String, sightings: [Sighting], serverTime: Double, registry snapshot: RegistrySnapshot,
               outboxID: Int? = nil) throws -> [SecurityAlert] {
        try apply(snapshot)
        let raised = state.withLock { state -> [SecurityAlert] in
            // A row retried after its store failed was already checked.
            guard state.appliedRows.insert(outboxID) else { return [] }
            guard let gateway = state.registry.gateways[gatewayID], let siteID = gateway.siteID, let site = state.registry.sites[siteID] else { return [] }
            if state.detectors[siteID] == nil, state.detectors.count >= siteLimit,
               let coldest = state.detectors.min(by: { $0.value.lastFed < $1.value.lastFed })?.key {
                state.detectors.removeValue(forKey: coldest)
            }
            var entry = state.detectors.removeValue(forKey: siteID) ?? SiteDetector(detector: SecurityDetector(site: site), lastFed: serverTime)
            entry.lastFed = serverTime
            var alerts: [SecurityAlert] = []
            for sighting in sightings {
                guard case .iBeacon(let frame) = sighting.frame else { continue }
                let observation = SecurityObservation(receiver: gateway.name, identity: frame.identity, rssi: sighting.rssi, address: sighting.address,
                                                      advertisedPower: frame.measuredPower, receiverTime: sighting.time, serverTime: serverTime)
                entry.detector.receive(observation, into: &alerts)
            }
            state.detectors[siteID] = entry
            return alerts
        }
        return raised
    }

    /// Opens the raised alerts and clears the quiet ones, through `db`.
    func store(raised: [SecurityAlert], gatewayID: String, db: any SQLDatabase) async throws -> [StoredEvent] {
        let cleared = try await clearQuiet(db: db)
        guard !raised.isEmpty else { return cleared }
        return try await record(raised: raised, gatewayID: gatewayID, db: db) + cleared
    }

    private func record(raised: [SecurityAlert], gatewayID: String, db: any SQLDatabase) async throws -> [StoredEvent] {
        try await storeTransitions(db: db) { state in
            var opened: [(FleetTransition, FleetSubjectPlace)] = []
            for alert in raised {
                let subject: FleetSubject = alert.identity.map { .beacon($0) } ?? .gateway(alert.receivers.first ?? "")
                let key = OpenKey(subject: subject, check: FleetCheck(alert.kind))
                // Already open: the raise only keeps it open; no event per sighting or holdoff.
                if state.open[key] != nil {
                    state.open[key]?.lastRaised = alert.time
                    continue
                }
                let place = state.registry.place(of: subject, gatewayID: gatewayID)
                if state.open.count >= Self.openLimit, let oldest = state.open.min(by: { $0.value.lastRaised < $1.value.lastRaised })?.key {
                    state.open.removeValue(forKey: oldest)
                }
                state.open[key] = OpenAlert(lastRaised: alert.time, reason: alert.reason, place: place)
                opened.append((FleetTransition(subject: subject, check: key.check, from: .ok, to: .alert, reason: alert.reason, time: alert.time), place))
            }
            return opened
        }
    }

    /// Clears every open alert not raised again for `quietPeriod` seconds of the server's clock.
    /// Runs after each batch and once a second from the fleet service, so it clears with no traffic.
    func clearQuiet(db: any SQLDatabase) async throws -> [StoredEvent] {
        guard hasQuietAlerts else { return [] }
        let now = clock()
        return try await storeTransitions(db: db) { state in
            let due = state.open.filter { now - $0.value.lastRaised >= quietPeriod }
            for key in due.keys { state.open.removeValue(forKey: key) }
            return due.sorted { $0.value.lastRaised < $1.value.lastRaised }.map { key, open in
                let reason = "not raised again for \(Int(quietPeriod)) s (last: \(open.reason))"
                return (FleetTransition(subject: key.subject, check: key.check, from: .alert, to: .ok, reason: reason, time: now), open.place)
            }
        }
    }

    /// Whether an open alert went quiet for `quietPeriod` and is due to be cleared.
    var hasQuietAlerts: Bool {
        let now = clock()
        return state.withLock { state in state.open.values.contains { now - $0.lastRaised >= quietPeriod } }
    }

    /// Changes the open alerts and stores the transitions that makes, one caller at a time, so
    /// the events are stored in the order the changes were decided. Callers hold a transaction
    /// (`db`) before this lock, never the other way round.
    private func storeTransitions(db: any SQLDatabase, _ change: @Sendable (inout State) -> [(FleetTransition, FleetSubjectPlace)]) async throws -> [StoredEvent] {
        try await storing.withLock {
            let transitions = state.withLock { state in change(&state) }
            return try await persist(transitions, db: db)
        }
    }

    private func persist(_ transitions: [(FleetTransition, FleetSubjectPlace)], db: any SQLDatabase) async throws -> [StoredEvent] {
        guard !transitions.isEmpty else { return [] }
        let places = Dictionary(transitions.map { ($0.0.subject, $0.1) }, uniquingKeysWith: { first, _ in first })
        return try await Store.storeFleetTransitions(transitions.map(\.0), place: { subject in
            places[subject] ?? FleetSubjectPlace(siteID: nil, label: subject.description, gatewayID: "")
        }, now: clock(), db: db)
    }
}

extension FleetCheck {
    /// The fleet check a security alert is stored under: each detector kind has its own.
    init(_ kind: SecurityAlert.Kind) {
        self = switch kind {
        case .clockSkew: .clockSkew
        case .staleSightings: .staleSightings
        case .impossibleTrace: .impossibleTrace
        case .outOfCoverage: .outOfCoverage
        case .rssiShift: .rssiShift
        case .secondAddress: .secondAddress
        case .replayedIdentity: .rotationReplay
        case .absentNeighbours: .absentNeighbours
        }
    }
}
