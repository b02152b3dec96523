import Foundation

/// The wall clock the engine is driven by when sightings arrive live. Injected, so tests run
/// the tick with a mock and never wait real seconds.
public protocol WallClock: Sendable {
    /// Seconds since 1970, the unit of live sightings' times.
    func now() -> Double
    /// Suspends for `seconds` of this clock's time; throws when the task is cancelled.
    func sleep(seconds: Double) async throws
}

/// The system's clock.
public struct SystemWallClock: WallClock {
    public init() {}

    public func now() -> Double { Date().timeIntervalSince1970 }

    public func sleep(seconds: Double) async throws {
        try await Task.sleep(for: .seconds(seconds))
    }
}
