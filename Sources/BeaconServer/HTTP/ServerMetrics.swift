import BeaconFleet
import Metrics
import Prometheus

/// The counters `/metrics` exposes, registered on a registry owned by one server, so several
/// servers in one test process don't share a global.
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    let sightings: Metrics.Counter
    let batches: Metrics.Counter
    let duplicateBatches: Metrics.Counter
    let refusedBatches: Metrics.Counter
    let events: Metrics.Counter
    let requests: Metrics.Counter
    let forgottenBeacons: Metrics.Counter
    let untrackedSightings: Metrics.Counter
    /// Reads of the whole registry by ``RegistrySnapshots``: one per registry change, never one per batch.
    let registryLoads: Metrics.Counter
    /// Events a webhook will not receive because its queue was full (its receiver slow or down).
    let webhookDrops: Metrics.Counter
    /// After-commit observer runs that failed and were left in the outbox for a retry.
    let observerFailures: Metrics.Counter
    /// Database reads of the event ring (``EventRing``): its start, its refreshes for all of an
    /// instance's live streams, and the catch-up pages of streams behind the ring.
    let eventDatabaseReads: Metrics.Counter
    /// Event streams closed because their client took no write for `slowReaderTimeout`.
    let slowReadersClosed: Metrics.Counter
    /// Event streams ended because their token was revoked or expired.
    let streamsEndedByToken: Metrics.Counter
    /// `proxima_beacons{state=…}`: beacons per fleet-health state, set when scraped.
    let beaconStates: [HealthLevel: Prometheus.Gauge]

    public init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        sightings = Metrics.Counter(label: "proxima_sightings_ingested_total", factory: factory)
        batches = Metrics.Counter(label: "proxima_batches_ingested_total", factory: factory)
        duplicateBatches = Metrics.Counter(label: "proxima_batches_duplicate_total", factory: factory)
        refusedBatches = Metrics.Counter(label: "proxima_batches_refused_total", factory: factory)
        events = Metrics.Counter(label: "proxima_region_events_total", factory: factory)
        requests = Metrics.Counter(label: "proxima_http_requests_total", factory: factory)
        forgottenBeacons = Metrics.Counter(label: "proxima_gateway_beacons_forgotten_total", factory: factory)
        untrackedSightings = Metrics.Counter(label: "proxima_sightings_untracked_total", factory: factory)
        registryLoads = Metrics.Counter(label: "proxima_registry_loads_total", factory: factory)
        webhookDrops = Metrics.Counter(label: "proxima_webhook_events_dropped_total", factory: factory)
        observerFailures = Metrics.Counter(label: "proxima_observer_failures_total", factory: factory)
        eventDatabaseReads = Metrics.Counter(label: "proxima_event_stream_database_reads_total", factory: factory)
        slowReadersClosed = Metrics.Counter(label: "proxima_event_streams_slow_closed_total", factory: factory)
        streamsEndedByToken = Metrics.Counter(label: "proxima_event_streams_token_ended_total", factory: factory)
        let registry = self.registry
        let descriptor = MetricNameDescriptor(metricName: "proxima_beacons", unitName: "", helpText: "beacons per fleet-health state")
        beaconStates = Dictionary(uniqueKeysWithValues: HealthLevel.allCases.map { level in
            (level, registry.makeGauge(descriptor: descriptor, labels: [("state", level.rawValue)]))
        })
    }

    public func exposition() -> String { registry.emitToString() }
}
