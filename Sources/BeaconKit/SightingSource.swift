/// Where sightings come from, for anything that consumes them (the engine, a calibration, a
/// gateway uploader): the stream, whose clock stamps it, and how to stop it cleanly. BeaconHCI
/// makes live scans and capture replays, BeaconSimulator simulated venues.
public struct SightingSource: Sendable {
    /// Whose clock the sightings' times are.
    public enum Timing: Sendable, Hashable {
        /// The wall clock: a consumer must move time on between packets (exits happen in silence).
        case live
        /// The source's own clock (a capture, a simulation): only its sightings move time, and
        /// when it ends nothing more happens unless the consumer lets time run out.
        case recorded
    }

    public var sightings: AsyncThrowingStream<Sighting, any Error>
    public var timing: Timing
    /// A line for a person: what is being scanned or replayed, or nil.
    public var description: String?
    /// Stops the source (disables a controller's scan); the stream then ends.
    public var stop: @Sendable () async throws -> Void

    public init(sightings: AsyncThrowingStream<Sighting, any Error>, timing: Timing, description: String? = nil,
                stop: @escaping @Sendable () async throws -> Void = {}) {
        self.sightings = sightings
        self.timing = timing
        self.description = description
        self.stop = stop
    }
}
