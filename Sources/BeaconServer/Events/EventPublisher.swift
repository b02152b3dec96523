import Logging

/// Where every stored event leaves the server, once: the live streams' ring gets it, webhooks and MQTT
/// get it queued (each bounded, neither waited for), the counters move and the log gets a line.
/// A feature that stores events publishes them here and nowhere else.
public struct EventPublisher: Sendable {
    let metrics: ServerMetrics
    let ring: EventRing
    let webhooks: WebhookDispatcher
    let mqtt: ServerMQTTOutput?
    let logger: Logger

    /// Sends events out on every feed; `source` names what made them, for the log.
    public func publish(_ events: [StoredEvent], source: String) async {
        guard !events.isEmpty else { return }
        metrics.events.increment(by: Int64(events.count))
        await ring.publish(events)
        webhooks.enqueue(events)
        mqtt?.enqueue(events)
        for event in events {
            logger.info("\(source) event", metadata: [
                "kind": "\(event.kindName)", "label": "\(event.label)", "gateway": "\(event.gatewayID)", "time": "\(event.time)",
            ])
        }
    }
}
