import CPrefetch

extension BeaconEngine {
    /// How many sightings ahead the batch path starts loading a beacon's index slot, and looks
    /// the beacon up and starts loading its record. A sighting costs about 70 ns of work and a
    /// miss to L3 about half that, so a few sightings of distance cover it; the slot goes first
    /// because the record's address needs it.
    static let slotLookahead = 4
    static let recordLookahead = 2

    /// Feeds sightings in order with exactly the effect of ``receive(_:into:)`` on each, but
    /// overlaps the memory latency of each beacon's lookups with the work on the sightings
    /// before it. Among thousands of beacons in random order, the identity's slot in the index
    /// and the beacon's record are each a cache miss, one after the other, which one-at-a-time
    /// feeding has to wait for; the batch knows the identities coming and asks for both early.
    public mutating func receive(contentsOf sightings: [Sighting], into events: inout [BeaconEvent]) {
        sightings.withUnsafeBufferPointer { receive(contentsOf: $0, into: &events) }
    }

    public mutating func receive(contentsOf sightings: ArraySlice<Sighting>, into events: inout [BeaconEvent]) {
        sightings.withUnsafeBufferPointer { receive(contentsOf: $0, into: &events) }
    }

    private mutating func receive(contentsOf batch: UnsafeBufferPointer<Sighting>, into events: inout [BeaconEvent]) {
        // Each sighting's index is looked up once, `recordLookahead` sightings early, and used
        // when its turn comes unless records were forgotten (moving indices) in between.
        var lookedUp = InlineArray<8, Int32>(repeating: -1)
        var lookedUpIn = InlineArray<8, UInt32>(repeating: 0)
        let count = batch.count
        for position in 0..<Swift.min(Self.recordLookahead, count) {
            lookedUp[position] = lookUpPrefetchingRecord(batch[position])
            lookedUpIn[position] = layoutGeneration
        }
        for position in 0..<count {
            if position + Self.slotLookahead < count {
                prefetchIndexSlot(for: batch[position + Self.slotLookahead])
            }
            let ahead = position + Self.recordLookahead
            if ahead < count {
                lookedUp[ahead & 7] = lookUpPrefetchingRecord(batch[ahead])
                lookedUpIn[ahead & 7] = layoutGeneration
            }
            receive(batch[position], lookedUp: lookedUp[position & 7], in: lookedUpIn[position & 7], into: &events)
        }
    }

    @inline(__always)
    private func prefetchIndexSlot(for sighting: Sighting) {
        guard case .iBeacon(let frame) = sighting.frame else { return }
        indexByIdentity.prefetch(IdentityKey(frame.identity))
    }

    /// The beacon's index (−1 when it is not tracked yet), with its record on its way to the cache.
    @inline(__always)
    private func lookUpPrefetchingRecord(_ sighting: Sighting) -> Int32 {
        guard case .iBeacon(let frame) = sighting.frame,
              let index = indexByIdentity.index(of: IdentityKey(frame.identity)) else { return -1 }
        // A record (104 bytes) straddles two cache lines more often than not.
        beacons.withUnsafeBufferPointer { records in
            let start = UnsafeRawPointer(records.baseAddress! + Int(index))
            proxima_prefetch(start)
            proxima_prefetch(start + MemoryLayout<TrackedBeacon>.stride - 1)
        }
        return index
    }
}
