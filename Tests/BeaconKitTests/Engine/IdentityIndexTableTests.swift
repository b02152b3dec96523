import Foundation
import Testing
@testable import BeaconKit

/// The engine's identity table against a `Dictionary` doing the same inserts, changes and
/// removals: growth, and removal in the middle of probe chains (backward shift), must never
/// lose or invent a key.
@Suite struct IdentityIndexTableTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func agreesWithADictionaryThroughInsertsChangesAndRemovals(seed: UInt64) {
        var table = IdentityIndexTable()
        var model: [IdentityKey: Int32] = [:]
        var random = EngineRandom(seed: seed)
        // Few distinct UUIDs and majors, as in a deployment, so keys differ in few bits.
        func key() -> IdentityKey {
            IdentityKey(high: 0xE2C5_6DB5_DFFB_48D2 ^ (random.next() % 3), low: 0xB060_D0F5_A710_96E0,
                        majorMinor: UInt32(truncatingIfNeeded: random.next() % 3000))
        }
        for step in 0..<20_000 {
            let candidate = key()
            switch random.next() % 3 {
            case 0, 1:
                let index = Int32(step)
                table.set(index, for: candidate)
                model[candidate] = index
            default:
                table.remove(candidate)
                model[candidate] = nil
            }
            if step % 997 == 0 {
                #expect(table.count == model.count)
                for (key, index) in model { #expect(table.index(of: key) == index) }
            }
        }
        #expect(table.count == model.count)
        for (key, index) in model { #expect(table.index(of: key) == index) }
        // Absent keys are absent, and the table stays at most 3/4 full.
        for _ in 0..<1000 {
            let probe = key()
            #expect(table.index(of: probe) == model[probe])
        }
        #expect(table.count * 4 <= table.capacity * 3)
    }

    @Test func removingEverythingLeavesItEmpty() {
        var table = IdentityIndexTable()
        let keys = (0..<500).map { IdentityKey(high: 1, low: 2, majorMinor: UInt32($0)) }
        for (offset, key) in keys.enumerated() { table.set(Int32(offset), for: key) }
        for key in keys.reversed() { table.remove(key) }
        #expect(table.count == 0)
        #expect(keys.allSatisfy { table.index(of: $0) == nil })
        table.remove(keys[0])
        #expect(table.count == 0)
    }
}

/// The ranging cycle's sort (keys and positions, gathered once) must give exactly Core Location's
/// order as ``RangedBeacon/rangingOrder(_:_:)`` defines it, ties and unknown accuracies included.
@Suite struct RangingOrderTests {
    @Test(arguments: [UInt64(4), 5, 6])
    func keyedSortMatchesTheComparator(seed: UInt64) {
        var random = EngineRandom(seed: seed)
        var scratch: [(key: Double, position: Int32)] = []
        for size in [0, 1, 2, 7, 100] {
            var list = (0..<size).map { offset -> RangedBeacon in
                // Few distinct accuracies, so ties fall back to the identity; some unknown.
                let accuracy = random.next() % 4 == 0 ? -1 : Double(random.next() % 5) / 2
                return RangedBeacon(identity: Fixture.identity(UInt16(random.next() % 3), UInt16(offset)), proximity: .near,
                                    accuracy: accuracy, rssi: -70, measuredPower: .appleDefault, timestamp: 0, packetCount: 1)
            }
            list.shuffle(using: &random)
            let expected = list.sorted(by: RangedBeacon.rangingOrder)
            RangedBeacon.sortInRangingOrder(&list, scratch: &scratch)
            #expect(list == expected)
        }
    }
}
