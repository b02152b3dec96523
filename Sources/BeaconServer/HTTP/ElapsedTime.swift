/// Time since a fixed start, read from an injected clock, so that what expires or refills with
/// time (cached tokens, sign-in codes, allowances) is tested by advancing a test clock rather
/// than by sleeping.
struct ElapsedTime: Sendable {
    private let read: @Sendable () -> Duration

    init(clock: any Clock<Duration>) {
        read = Self.reader(clock)
    }

    private static func reader<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// The time since this was made.
    var now: Duration { read() }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
