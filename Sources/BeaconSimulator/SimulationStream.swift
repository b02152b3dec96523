import BeaconKit
import Foundation

/// How a simulation's clock relates to the wall clock.
public enum Pacing: Sendable, Hashable {
    /// Virtual time: sightings come as fast as they can be computed.
    case virtual
    /// Each sighting is released when its simulated time divided by the factor has passed on the
    /// wall clock since the stream started (1 is real time, 10 ten times faster).
    case scaled(Double)

    public static let realTime = Pacing.scaled(1)
}

extension Simulation {
    /// The sightings of a scenario, with ground truth, as an async stream. Cancelling the
    /// consuming task stops the simulation.
    public static func stream(_ scenario: Scenario, pacing: Pacing = .virtual,
                              duration: Double? = nil) -> AsyncThrowingStream<SimulatedSighting, any Error> {
        var scenario = scenario
        let (stream, continuation) = AsyncThrowingStream<SimulatedSighting, any Error>.makeStream(bufferingPolicy: .bufferingOldest(4096))
        if let duration {
            do { try Scenario.checkDuration(duration, field: "duration") } catch {
                continuation.finish(throwing: error)
                return stream
            }
            scenario.duration = duration
        }
        let finalScenario = scenario
        let task = Task {
            var simulation = Simulation(scenario: finalScenario)
            let clock = ContinuousClock()
            let start = clock.now
            var produced = 0
            while let next = simulation.next() {
                if Task.isCancelled { break }
                if case .scaled(let factor) = pacing, factor > 0 {
                    let due = start + .microseconds(Int64(next.sighting.time / factor * 1_000_000))
                    if due > clock.now { try? await clock.sleep(until: due) }
                } else {
                    produced += 1
                    // Yield now and then, and wait while the consumer is behind, so a virtual-time
                    // run cannot fill memory faster than it is read.
                    if produced % 256 == 0 { await Task.yield() }
                }
                while true {
                    let result = continuation.yield(next)
                    if case .dropped = result {
                        try? await Task.sleep(for: .milliseconds(1))
                        if Task.isCancelled { break }
                        continue
                    }
                    break
                }
                if Task.isCancelled { break }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The same stream reduced to plain sightings, as the engine and the CLI's sources take them.
    public static func sightings(_ scenario: Scenario, pacing: Pacing = .virtual,
                                 duration: Double? = nil) -> AsyncThrowingStream<Sighting, any Error> {
        let simulated = stream(scenario, pacing: pacing, duration: duration)
        // Bounded like the inner stream: waits while the consumer is behind.
        return AsyncThrowingStream(bufferingPolicy: .bufferingOldest(4096)) { continuation in
            let task = Task {
                do {
                    for try await item in simulated {
                        while case .dropped = continuation.yield(item.sighting) {
                            try await Task.sleep(for: .milliseconds(1))
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
