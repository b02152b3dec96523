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
