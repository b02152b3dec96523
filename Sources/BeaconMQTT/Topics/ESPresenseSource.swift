import BeaconKit
import Foundation

extension SightingSource {
    /// Sightings from ESPresense nodes: `client` subscribes to `<root>/devices/#` and each iBeacon
    /// report becomes a sighting by the node's room, stamped with the wall clock (reports carry
    /// no time), so Proxima's engine, room decider and gateway work over an existing ESPresense
    /// installation. Reports of other devices are skipped; malformed ones are told to `refused`
    /// and skipped. `stop` disconnects.
    public static func espresense(client: MQTTClient, root: String = "espresense",
                                  now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                                  refused: @escaping @Sendable (ESPresenseReport.Refusal) -> Void = { _ in }) async -> SightingSource {
        let (stream, continuation) = AsyncThrowingStream<Sighting, any Error>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        await client.start()
        let subscriber = Task {
            // Recorded at once and sent again on every connect; the first SUBACK's wait may
            // time out while the broker is away, which changes nothing.
            _ = try? await client.subscribe([("\(root)/devices/#", .atMostOnce)], timeout: .seconds(1))
        }
        let reader = Task {
            for await message in client.messages where message.topic.hasPrefix("\(root)/devices/") {
                do throws(ESPresenseReport.Refusal) {
                    let report = try ESPresenseReport(topic: message.topic, payload: message.payload, root: root)
                    if let sighting = report.sighting(at: now()) { continuation.yield(sighting) }
                } catch {
                    refused(error)
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            subscriber.cancel()
            reader.cancel()
        }
        return SightingSource(sightings: stream, timing: .live, description: "ESPresense reports from \(client.configuration.broker)") {
            await client.disconnect(flushTimeout: .seconds(1))
        }
    }
}
