import BeaconKit
import Foundation

/// Replays a capture's sightings through the live scan's decoder, paced like the original.
public enum CaptureReplay {
    /// Sightings of the capture at `url`. `speed` 1 replays in real time, 2 twice as fast, 0 as
    /// fast as possible. Sighting times are the capture's own timestamps. The receiver defaults
    /// to the file's name.
    public static func sightings(url: URL, speed: Double = 1, receiver: String? = nil) throws -> AsyncThrowingStream<Sighting, any Error> {
        let capture: Capture
        do {
            capture = try CaptureReader.read(contentsOf: url)
        } catch let error as CaptureError {
            throw CaptureReplayError(path: url.path, reason: error.description)
        }
        return sightings(capture: capture, speed: speed, receiver: receiver ?? url.lastPathComponent)
    }

    public static func sightings(capture: Capture, speed: Double, receiver: String) -> AsyncThrowingStream<Sighting, any Error> {
        let decoder = SightingDecoder(receiver: receiver)
        return AsyncThrowingStream { continuation in
            let task = Task {
                let clock = ContinuousClock()
                let start = clock.now
                let first = capture.packets.first?.microseconds ?? 0
                do {
                    for packet in capture.packets {
                        let sightings = decoder.decode(packet).sightings
                        guard !sightings.isEmpty else { continue }
                        if speed > 0 {
                            let offset = Double(packet.microseconds - first) / 1_000_000 / speed
                            try await clock.sleep(until: start.advanced(by: .seconds(max(0, offset))))
                        }
                        for sighting in sightings { continuation.yield(sighting) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// All sightings at once, for tests and offline analysis.
    public static func allSightings(capture: Capture, receiver: String) -> [Sighting] {
        let decoder = SightingDecoder(receiver: receiver)
        return capture.packets.flatMap { decoder.decode($0).sightings }
    }
}

public struct CaptureReplayError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot replay \(path): \(reason)" }
}
