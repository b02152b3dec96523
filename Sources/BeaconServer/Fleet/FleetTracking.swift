import BeaconFleet
import BeaconKit
import Foundation
import SQLKit
import Synchronization

/// The server's side of fleet health: one ``FleetMonitor`` for the whole server, built from the
/// registry, fed every accepted batch, and evaluated once a second of the gateways' clock. Each
/// change of a finding that opens, moves or closes an alert is stored as an alert event.
///
/// Time is the gateways' clock (the sightings'): the latest batch's newest sighting, moved on by
/// the server's clock since that batch arrived, so a server whose gateways have all gone quiet
/// still sees time pass. Evaluations run from ingestion when a batch's time passes the next
/// second, and from ``FleetCheckService`` once a second.
///
/// The monitor lives in this instance's memory and relearns after a restart (coverage is learnt
/// in minutes; open alerts stay in the database). With several instances, send all gateways to
/// one instance, as for positions.
public final class FleetTracking: Sendable {
    public let settings: FleetSettings
    /// Seconds of gateway time between evaluations.
    public let interval: Double
    let clock: @Sendable () -> Double
    private let state: Mutex<State>
    /// Keeps stores in order: a clear is never stored before its raise.
    private let evaluation = AsyncMutex()

    private struct State: Sendable {
        var monitor: FleetMonitor
        var registry = FleetRegistry()
        var appliedGeneration = 0
        var appliedRows = AppliedOutboxRows()
        var latestBatchTime: Double?
        var latestArrival = 0.0
        var lastEvaluation = -Double.infinity
        /// Alert changes the checks made that no transaction stored yet.
        var waiting: [WaitingTransitions] = []
    }

    private struct WaitingTransitions: Sendable {
        var transitions: [FleetTransition]
        var registry: FleetRegistry
    }

    public init(settings: FleetSettings = FleetSettings(), interval: Double = 1,
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.settings = settings
        self.interval = max(0.1, interval)
        self.clock = clock
        state = Mutex(State(monitor: FleetMonitor(beacons: [], gateways: [], organisationUUIDs: [], settings: settings)))
    }

    /// Takes a newer registry snapshot, keeping what was learnt; an older or the same one is ignored.
    func apply(_ snapshot: RegistrySnapshot) {
        state.withLock { state in
            guard snapshot.generation > state.appliedGeneration else { return }
            let registry = snapshot.fleet
            state.monitor.updateRegistry(beacons: registry.beacons, gateways: registry.gateways,
                                         organisationUUIDs: registry.organisationUUIDs)
            state.registry = registry
            state.appliedGeneration = snapshot.generation
        }
    }

    /// The registry generation the checks run on now.
    var appliedGeneration: Int { state.withLock { $0.appliedGeneration } }

    /// Feeds one accepted batch: the gateway reported at the batch's newest sighting time (the
    /// current estimate for an empty batch), and every sighting is observed as heard by it.
    /// Returns whether an evaluation is due.
    func observe(gatewayID: String, sightings: [Sighting], registry snapshot: RegistrySnapshot, outboxID: Int? = nil) -> Bool {
        apply(snapshot)
        let arrival = clock()
        return state.withLock { state in
            // A row retried after its evaluation failed was already observed.
            guard state.appliedRows.insert(outboxID) else { return true }
            guard let name = state.registry.gatewaysByID[gatewayID]?.name, let gateway = state.monitor.gatewayIndex(for: name) else {
                return false
            }
            var batchTime = -Double.infinity
            for sighting in sightings where sighting.time > batchTime { batchTime = sighting.time }
            if batchTime == -.infinity {
                guard let estimate = Self.estimate(state, arrival: arrival) else { return false }
                batchTime = estimate
            }
            state.monitor.gatewayReported(name, at: batchTime)
            for sighting in sightings { state.monitor.observe(sighting, gateway: gateway) }
            if batchTime > state.latestBatchTime ?? -.infinity {
                state.latestBatchTime = batchTime
                state.latestArrival = arrival
            }
            return batchTime >= state.lastEvaluation + interval
        }
    }

    private static func estimate(_ state: State, arrival: Double) -> Double? {
        state.latestBatchTime.map { $0 + max(0, arrival - state.latestArrival) }
    }

    /// Whether a second of gateway time passed since the last evaluation, or alert changes wait
    /// for a store.
    var isEvaluationDue: Bool {
        let arrival = clock()
        return state.withLock { state in
            !state.waiting.isEmpty || Self.estimate(state, arrival: arrival).map { $0 >= state.lastEvaluation + interval } ?? false
        }
    }

    /// Whether alert changes of the checks wait for a store.
    var hasWaitingChanges: Bool { state.withLock { !$0.waiting.isEmpty } }

    /// The gateways' clock now, nil before the first batch.
    public var now: Double? {
        let arrival = clock()
        return state.withLock { Self.estimate($0, arrival: arrival) }
    }

    /// The checks in memory, if a second of gateway time passed: their alert changes wait, in
    /// order, for ``storeWaiting(db:)``. Returns whether any change waits, so a batch whose
    /// checks changed nothing (the usual case) needs no transaction.
    @discardableResult
    func runChecks(registry snapshot: RegistrySnapshot) -> Bool {
        apply(snapshot)
        let arrival = clock()
        return state.withLock { state in
            if let estimate = Self.estimate(state, arrival: arrival), estimate >= state.lastEvaluation + interval {
                state.lastEvaluation = estimate
                let transitions = state.monitor.evaluate(now: estimate)
                if !transitions.isEmpty { state.waiting.append(WaitingTransitions(transitions: transitions, registry: state.registry)) }
            }
            return !state.waiting.isEmpty
        }
    }

    /// Stores the waiting alert changes in the order the checks made them. A store that fails
    /// puts them back in front, so the next store (a retry, the next batch, the timer) writes
    /// them: a change is never lost and a clear never lands before its raise.
    func storeWaiting(db: any SQLDatabase) async throws -> [StoredEvent] {
        try await evaluation.withLock {
            let taken = state.withLock { state in
                defer { state.waiting = [] }
                return state.waiting
            }
            guard !taken.isEmpty else { return [] }
            do {
                var events: [StoredEvent] = []
                for group in taken {
                    events += try await Store.storeFleetTransitions(group.transitions, place: Self.places(in: group.registry), now: clock(), db: db)
                }
                return events
            } catch {
                state.withLock { $0.waiting.insert(contentsOf: taken, at: 0) }
                throw error
            }
        }
    }

    private static func places(in registry: FleetRegistry) -> @Sendable (FleetSubject) -> FleetSubjectPlace {
        let beacons = Dictionary(registry.beacons.map { ($0.identity, $0) }, uniquingKeysWith: { first, _ in first })
        return { subject in
            switch subject {
            case .beacon(let identity):
                if let beacon = beacons[identity] { return FleetSubjectPlace(siteID: beacon.siteID, label: beacon.label, gatewayID: "") }
                return FleetSubjectPlace(siteID: nil, label: identity.description, gatewayID: "")
            case .gateway(let name):
                let id = registry.gatewayIDsByName[name]
                return FleetSubjectPlace(siteID: id.flatMap { registry.gatewaysByID[$0]?.siteID }, label: name, gatewayID: id ?? "")
            }
        }
    }

    /// The fleet table (of one site, or all) at the gateways' clock.
    public func report(siteID: Int? = nil) -> [BeaconHealth] {
        let arrival = clock()
        return state.withLock { state in
            let now = Self.estimate(state, arrival: arrival) ?? 0
            let rows = state.monitor.report(now: now)
            return siteID.map { site in rows.filter { $0.siteID == site } } ?? rows
        }
    }

    /// A registered beacon's battery readings by hour (this instance's memory: relearnt after a
    /// restart, like coverage).
    public func batteryHistory(of identity: BeaconIdentity) -> BatteryHistory? {
        state.withLock { $0.monitor.batteryHistory(of: identity) }
    }

    /// Identities under the organisations' UUIDs the registry does not know, and where they are.
    public var unregisteredIdentities: [UnregisteredSighting] {
        state.withLock { $0.monitor.unregisteredIdentities }
    }

    func gatewayNames(siteID: Int) -> Set<String> {
        state.withLock { state in Set(state.registry.gatewaysByID.values.filter { $0.siteID == siteID }.map(\.name)) }
    }

    /// Beacons per state, for the `proxima_beacons` gauges.
    public func stateCounts() -> [HealthLevel: Int] {
        state.withLock { $0.monitor.stateCounts() }
    }
}
