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
        } catch let error as DecodeError {
            throw CaptureReplayError(path: url.path, reason: error.description)
        }
        return sightings(capture: capture, speed: speed, receiver: receiver ?? url.lastPathComponent, path: url.path)
    }

    /// The longest wait between packets a paced replay accepts, in capture time: a timestamp
    /// further ahead is taken as damage, not as a pause to sit out.
    public static let defaultMaximumGap: Duration = .seconds(3600)

    /// Sightings of `capture`, paced by its timestamps when `speed` > 0. A packet stamped more
    /// than `maximumGap` after the latest one before it ends the stream with an error naming its
    /// record, instead of a wait that could last years.
    public static func sightings(capture: Capture, speed: Double, receiver: String,
                                 maximumGap: Duration = defaultMaximumGap) -> AsyncThrowingStream<Sighting, any Error> {
        sightings(capture: capture, speed: speed, receiver: receiver, maximumGap: maximumGap, path: nil)
    }

    static func sightings(capture: Capture, speed: Double, receiver: String, maximumGap: Duration = defaultMaximumGap,
                          path: String?) -> AsyncThrowingStream<Sighting, any Error> {
        let decoder = SightingDecoder(receiver: receiver)
        return AsyncThrowingStream { continuation in
            let task = Task {
                let clock = ContinuousClock()
                let start = clock.now
                var schedule = ReplaySchedule(start: capture.packets.first?.microseconds ?? 0, maximumGap: maximumGap)
                do {
                    for (index, packet) in capture.packets.enumerated() {
                        let sightings = decoder.decode(packet).sightings
                        guard !sightings.isEmpty else { continue }
                        if speed > 0 {
                            let location = index < capture.records.count ? capture.records[index]
                                : Capture.RecordLocation(index: index, offset: 0)
                            let offset: Double
                            do throws(DecodeError) {
                                offset = try schedule.offset(of: packet.microseconds, at: location)
                            } catch {
                                guard let path else { throw error }
                                throw CaptureReplayError(path: path, reason: error.description)
                            }
                            try await clock.sleep(until: start.advanced(by: .seconds(offset / speed)))
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

/// When each paced packet is due, in seconds after the capture's first packet, checking that no
/// timestamp jumps further ahead than `maximumGap`. Stamps that go back are due at once.
struct ReplaySchedule {
    var start: Int64
    var maximumGap: Duration
    /// The latest offset due so far, in microseconds.
    private var latest: Int64 = 0

    init(start: Int64, maximumGap: Duration) {
        self.start = start
        self.maximumGap = maximumGap
    }

    mutating func offset(of microseconds: Int64, at location: Capture.RecordLocation) throws(DecodeError) -> Double {
        let (offset, overflow) = microseconds.subtractingReportingOverflow(start)
        let limit = maximumGap.components.seconds * 1_000_000
        guard !overflow, offset <= latest || offset - latest <= limit else {
            throw DecodeError(field: "capture record \(location.index) timestamp", offset: location.offset,
                expected: "at most \(maximumGap.components.seconds) s after the packet before it (replay with --speed 0 to ignore time)",
                found: overflow ? "a timestamp beyond the range of the clock" : "\((offset - latest) / 1_000_000) s after it")
        }
        latest = max(latest, offset)
        return Double(max(0, offset)) / 1_000_000
    }
}

public struct CaptureReplayError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot replay \(path): \(reason)" }
}
