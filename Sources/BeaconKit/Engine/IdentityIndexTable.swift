import CPrefetch

/// The engine's identity → dense index table: open addressing with linear probing in one array
/// of 24-byte slots, so a lookup usually reads one cache line.
///
/// It replaces a `Dictionary` because hashing, not memory, was the cost of
/// ``BeaconEngine/receive(_:into:)``: SipHash-1-3 (the standard `Hasher`) took about 26 of the
/// 42 ns of a lookup among 10,000 beacons. Here the key is mixed by two 64 × 64 → 128-bit
/// multiplications with secret per-table seeds (the "mum" step of wyhash; Go's runtime hashes
/// its maps, without AES instructions, with a wyhash-derived function and random seeds). The seeds come from the system's random
/// generator, so a sender who chooses identities cannot aim them at one probe chain
/// (hash flooding); equality is still decided on the whole key.
struct IdentityIndexTable: Sendable {
    private struct Slot {
        var key: IdentityKey
        /// The dense index; negative when the slot is empty.
        var index: Int32
    }

    private static let empty = Slot(key: IdentityKey(high: 0, low: 0, majorMinor: 0), index: -1)

    private var slots: ContiguousArray<Slot>
    private var mask: Int
    private(set) var count = 0
    private let seeds: (UInt64, UInt64, UInt64, UInt64)

    init() {
        var random = SystemRandomNumberGenerator()
        seeds = (random.next(), random.next(), random.next(), random.next())
        slots = ContiguousArray(repeating: Self.empty, count: 16)
        mask = 15
    }

    /// Slots allocated (for the footprint).
    var capacity: Int { slots.count }
    static var slotStride: Int { MemoryLayout<Slot>.stride }

    @inline(__always)
    private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @inline(__always)
    private func home(_ key: IdentityKey) -> Int {
        let first = Self.mix(key.high ^ seeds.0, key.low ^ seeds.1)
        return Int(truncatingIfNeeded: Self.mix(first ^ UInt64(key.majorMinor) ^ seeds.2, seeds.3)) & mask
    }

    @inline(__always)
    func index(of key: IdentityKey) -> Int32? {
        slots.withUnsafeBufferPointer { slots in
            var position = home(key)
            while true {
                let slot = slots[position]
                if slot.index < 0 { return nil }
                if slot.key == key { return slot.index }
                position = (position + 1) & mask
            }
        }
    }

    /// Starts loading the key's home slot without waiting for it, so that a lookup a few
    /// sightings later finds the slot in cache (``BeaconEngine/receive(contentsOf:into:)``).
    @inline(__always)
    func prefetch(_ key: IdentityKey) {
        slots.withUnsafeBufferPointer { proxima_prefetch($0.baseAddress! + home(key)) }
    }

    /// Inserts the key or changes its index.
    mutating func set(_ index: Int32, for key: IdentityKey) {
        precondition(index >= 0)
        var position = home(key)
        while slots[position].index >= 0 {
            if slots[position].key == key {
                slots[position].index = index
                return
            }
            position = (position + 1) & mask
        }
        // At most 3/4 full, so probe chains stay short.
        if (count + 1) * 4 > slots.count * 3 {
            grow()
            set(index, for: key)
            return
        }
        slots[position] = Slot(key: key, index: index)
        count += 1
    }

    /// Removes the key; later slots of its chain move back so no probe stops short (no tombstones).
    mutating func remove(_ key: IdentityKey) {
        var hole = home(key)
        while slots[hole].key != key || slots[hole].index < 0 {
            if slots[hole].index < 0 { return }
            hole = (hole + 1) & mask
        }
        var next = hole
        while true {
            next = (next + 1) & mask
            if slots[next].index < 0 { break }
            let wanted = home(slots[next].key)
            // The entry at `next` may fill the hole unless its home lies cyclically in (hole, next].
            let staysPut = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if !staysPut {
                slots[hole] = slots[next]
                hole = next
            }
        }
        slots[hole] = Self.empty
        count -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = ContiguousArray(repeating: Self.empty, count: old.count * 2)
        mask = slots.count - 1
        count = 0
        for slot in old where slot.index >= 0 { set(slot.index, for: slot.key) }
    }
}

extension IdentityKey {
    init(high: UInt64, low: UInt64, majorMinor: UInt32) {
        self.high = high
        self.low = low
        self.majorMinor = majorMinor
    }
}
