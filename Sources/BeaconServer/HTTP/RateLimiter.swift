import Foundation

/// A token bucket per gateway: `rate` batches per second on average, bursts up to `burst`.
actor RateLimiter {
    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Double
    private var buckets: [String: Bucket] = [:]
    private let clock = ContinuousClock()

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// Takes one token; returns the seconds to wait when none is left.
    func take(_ key: String) -> Double? {
        let now = clock.now
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        let elapsed = bucket.updated.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
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
