/// A dictionary that holds at most `capacity` entries: when full, the least recently used
/// quarter is forgotten at once, so each insertion costs O(log n) amortised and memory stays
/// bounded whatever keys a sender makes up.
struct BoundedTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private var entries: [Key: (value: Value, used: Double)] = [:]
    let capacity: Int

    init(capacity: Int) {
        self.capacity = Swift.max(1, capacity)
    }

    var count: Int { entries.count }

    /// The value for `key` (made by `make` when absent), marked as used at `time`, after
    /// `update` changed it; returns what `update` returned.
    mutating func withValue<Result>(for key: Key, at time: Double, make: () -> Value,
                                    _ update: (inout Value) -> Result) -> Result {
        if entries.count >= capacity, entries[key] == nil { evictLeastRecentlyUsed() }
        // Changed in place through the dictionary's accessor: one lookup, and no copy of the value.
        return Self.touch(&entries[key, default: (make(), time)], at: time, update)
    }

    private static func touch<Result>(_ entry: inout (value: Value, used: Double), at time: Double,
                                      _ update: (inout Value) -> Result) -> Result {
        entry.used = Swift.max(entry.used, time)
        return update(&entry.value)
    }

    func value(for key: Key) -> Value? { entries[key]?.value }

    private mutating func evictLeastRecentlyUsed() {
        let dropCount = Swift.max(1, entries.count / 4)
        let oldest = entries.map { ($0.key, $0.value.used) }.sorted { $0.1 < $1.1 }.prefix(dropCount)
        for (key, _) in oldest { entries.removeValue(forKey: key) }
    }
}

/// The times of the last few strikes against a subject: enough of them within a window raise
/// an alert, so one fading peak never does. Holds at most `limit` times.
struct StrikeCounter: Sendable {
    private var times: [Double] = []

    /// Records a strike at `time`; true once `limit` strikes fall within `window` seconds.
    mutating func strike(at time: Double, limit: Int, window: Double) -> Bool {
        times.append(time)
        if times.count > limit { times.removeFirst(times.count - limit) }
        guard times.count >= limit, let first = times.first else { return false }
        return time - first <= window
    }

    mutating func reset() { times.removeAll(keepingCapacity: true) }
}
