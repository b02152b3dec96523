import Foundation
import Testing
@testable import BeaconKit

/// `receive(contentsOf:into:)` only reorders memory traffic: its events, activity and state
/// must equal feeding the same sightings one at a time, including when beacons are forgotten
/// (and indices move) in the middle of a batch.
@Suite struct BatchReceiveTests {
    /// A day of traffic in random order: 300 identities over two UUIDs, some leaving for good,
    /// varying measured power, gaps long enough to exit, and Eddystone frames between.
    static func traffic(seed: UInt64) -> [Sighting] {
        var generator = SplitMixForTests(seed: seed)
        var sightings: [Sighting] = []
        var time = 0.0
        for _ in 0..<40_000 {
            time += Double(generator.next() % 100) / 1_000
            let n = Int(generator.next() % 300)
            // The upper third falls silent after a while, so the retention policy forgets them.
            if n >= 200 && time > 600 { continue }
            if generator.next() % 25 == 0 {
                sightings.append(Sighting(time: time, receiver: "r", address: BluetoothAddress(rawValue: 1), rssi: -70,
                                          frame: .eddystone(.url(txPowerAt0m: -20, url: "https://example.com"))))
                continue
            }
            let identity = Fixture.identity(UInt16(n / 100), UInt16(n % 100), uuid: n % 2 == 0 ? Fixture.uuid : Fixture.otherUUID)
            let power = MeasuredPower(generator.next() % 50 == 0 ? -62 : -59)
            sightings.append(Fixture.sighting(identity, time: time, rssi: Int8(-40 - Int(generator.next() % 50)), power: power))
        }
        return sightings
    }

    static func engine(limit: Int?) -> BeaconEngine {
        var engine = BeaconEngine()
        engine.followsEveryBeacon = true
        engine.retention = BeaconRetention(limit: limit, forgetsSilentBeacons: true)
        for major in 0..<3 {
            let region = Fixture.region("site-\(major)", major: UInt16(major))
            _ = try! engine.startMonitoring(region)
            engine.startRanging(region)
        }
        return engine
    }

    @Test(arguments: [nil, 150] as [Int?])
    func batchesEqualOneAtATime(limit: Int?) {
        let sightings = Self.traffic(seed: 7)
        var single = Self.engine(limit: limit), batched = Self.engine(limit: limit)
        var singleEvents: [BeaconEvent] = [], batchedEvents: [BeaconEvent] = []
        for sighting in sightings { single.receive(sighting, into: &singleEvents) }
        // Batches of uneven sizes, including ones shorter than the lookahead.
        var start = 0, size = 1
        while start < sightings.count {
            let end = min(start + size, sightings.count)
            batched.receive(contentsOf: sightings[start..<end], into: &batchedEvents)
            start = end
            size = size % 300 + 7
        }
        #expect(singleEvents.count > 100, "the traffic should cause enters, exits and ranging")
        #expect(batchedEvents == singleEvents)
        #expect(batched.takeActivity() == single.takeActivity())
        #expect(batched.trackedBeaconCount == single.trackedBeaconCount)
        if limit != nil { #expect(single.trackedBeaconCount <= 150) }
        #expect(batched.work == single.work)
    }

    @Test func anArrayBatchEqualsItsSlices() {
        let sightings = Self.traffic(seed: 11)
        var whole = Self.engine(limit: nil), sliced = Self.engine(limit: nil)
        var wholeEvents: [BeaconEvent] = [], slicedEvents: [BeaconEvent] = []
        whole.receive(contentsOf: sightings, into: &wholeEvents)
        for start in stride(from: 0, to: sightings.count, by: 1_000) {
            sliced.receive(contentsOf: sightings[start..<min(start + 1_000, sightings.count)], into: &slicedEvents)
        }
        #expect(!wholeEvents.isEmpty)
        #expect(wholeEvents == slicedEvents)
    }
}

/// SplitMix64: a small deterministic generator so the traffic is the same on every run.
struct SplitMixForTests {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
