/// Owns a ``BeaconEngine`` for live use and publishes its events as a stream, like
/// `CLLocationManager` with its delegate. It never reads a clock itself: either the caller
/// feeds sightings and, for live sources, calls ``advance(to:)`` about once a second with the
/// wall clock, or ``run(_:monitoring:ranging:receiver:clock:notices:)`` does both from a
/// ``SightingSource`` with an injected ``WallClock``.
public actor BeaconManager {
    private var engine: BeaconEngine
    private var pending: [BeaconEvent] = []
    public nonisolated let events: AsyncStream<BeaconEvent>
    private let continuation: AsyncStream<BeaconEvent>.Continuation

    public init(configuration: EngineConfiguration = .init()) {
        engine = BeaconEngine(configuration: configuration)
        (events, continuation) = AsyncStream.makeStream(of: BeaconEvent.self, bufferingPolicy: .unbounded)
    }

    public func startMonitoring(_ region: BeaconRegion, at time: Double? = nil) throws(MonitoringError) {
        publish(try engine.startMonitoring(region, at: time))
    }

    @discardableResult
    public func stopMonitoring(identifier: String) -> Bool { engine.stopMonitoring(identifier: identifier) }

    public func startRanging(_ region: BeaconRegion) { engine.startRanging(region) }

    @discardableResult
    public func stopRanging(identifier: String) -> Bool { engine.stopRanging(identifier: identifier) }

    /// Publishes the region's state as a `didDetermineState` event and returns it.
    @discardableResult
    public func requestState(for identifier: String, at time: Double? = nil) throws(MonitoringError) -> RegionState {
        let event = try engine.requestState(for: identifier, at: time)
        publish([event])
        if case .didDetermineState(let state, _, _) = event { return state }
        return .unknown
    }

    public var monitoredRegions: [BeaconRegion] { engine.monitoredRegions }

    /// Seconds after a source's last packet by which every beacon has exited and left the
    /// ranging lists: the longest exit timeout or tracking age, one ranging cycle and one exit
    /// check more.
    public var settlingTime: Double {
        let configuration = engine.configuration
        return max(engine.longestExitTimeout, configuration.trackingAge) + configuration.rangingCycle
            + configuration.exitCheckInterval
    }
    public var rangedRegions: [BeaconRegion] { engine.rangedRegions }

    public func receive(_ sighting: Sighting) {
        engine.receive(sighting, into: &pending)
        flush()
    }

    /// Feeds a batch in one actor hop.
    public func receive(contentsOf sightings: some Sequence<Sighting>) {
        for sighting in sightings { engine.receive(sighting, into: &pending) }
        flush()
    }

    public func advance(to time: Double) {
        engine.advance(to: time, into: &pending)
        flush()
    }

    /// Ends the event stream.
    public func finish() { continuation.finish() }

    private func publish(_ events: [BeaconEvent]) {
        for event in events { continuation.yield(event) }
    }

    private func flush() {
        guard !pending.isEmpty else { return }
        publish(pending)
        pending.removeAll(keepingCapacity: true)
    }
}
