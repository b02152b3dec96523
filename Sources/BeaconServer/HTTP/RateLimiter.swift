import Foundation

/// A token bucket per gateway: `rate` batches per second on average, bursts up to `burst`.
actor RateLimiter {
    struct Bucket {
        var tokens: Double
        var updated: Duration
    }

    let rate: Double
    let burst: Double
    private var buckets: [String: Bucket] = [:]
    private let time: ElapsedTime

    init(rate: Double, burst: Double, clock: any Clock<Duration> = ContinuousClock()) {
        self.rate = rate
        self.burst = burst
        self.time = ElapsedTime(clock: clock)
    }

    /// Takes one token; returns the seconds to wait when none is left.
    func take(_ key: String) -> Double? {
        let now = time.now
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        let seconds = ElapsedTime.seconds(now - bucket.updated)
        bucket.tokens = min(burst, bucket.tokens + seconds * rate)
        bucket.updated = now
        defer { buckets[key] = bucket }
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            return nil
        }
        return (1 - bucket.tokens) / rate
    }
}
