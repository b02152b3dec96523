import BeaconKit
import Foundation

/// A source whose sightings end at SIGINT or SIGTERM, so a consumer that posts or writes what
/// it read (the gateway) sees an ordinary end and finishes its work, instead of dying with a
/// buffer unposted or the controller still scanning.
struct StoppableSource: Sendable {
    let sightings: AsyncThrowingStream<Sighting, any Error>
    private let reader: Task<Void, Never>
    private let watcher: Task<Void, Never>

    /// `onSignal` is told which signal ended the source (for a message).
    init(_ source: SightingSource, onSignal: @escaping @Sendable (Int32) -> Void) {
        let signals = ProcessSignals.stream()
        let (stream, continuation) = AsyncThrowingStream<Sighting, any Error>.makeStream(bufferingPolicy: .bufferingOldest(4096))
        let reader = Task {
            do {
                // Bounded, and never lossy: a source faster than its consumer (a virtual-time
                // simulation, a replay) waits instead of filling memory or dropping.
                for try await sighting in source.sightings {
                    while case .dropped = continuation.yield(sighting) {
                        try await Task.sleep(for: .milliseconds(1))
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        watcher = Task {
            for await number in signals {
                onSignal(number)
                // Finished before the reader is cancelled, so the consumer sees an end, not
                // the reader's cancellation error.
                continuation.finish()
                reader.cancel()
                // A controller's scan is disabled before the process goes.
                try? await source.stop()
                return
            }
        }
        self.reader = reader
        self.sightings = stream
    }

    /// Stops watching for signals once the consumer is done.
    func finish() {
        watcher.cancel()
        reader.cancel()
    }
}
