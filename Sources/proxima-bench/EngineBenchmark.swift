import BeaconKit
import Foundation

/// CPU time of this thread in seconds: on a shared machine, wall time counts other processes.
func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Wall and CPU seconds of a block.
func measure(_ body: () -> Void) -> (wall: Double, cpu: Double) {
    let wallStart = DispatchTime.now().uptimeNanoseconds
    let cpuStart = threadCPUSeconds()
    body()
    return (Double(DispatchTime.now().uptimeNanoseconds - wallStart) / 1e9, threadCPUSeconds() - cpuStart)
}

/// Sightings per second through the engine (filter per sample, monitoring per sample, distance
/// and proximity per beacon per ranging cycle) with 10,000 beacons at 10 Hz and 100 regions,
/// and bytes of state per tracked beacon. Single-threaded, so the rate is per core.
enum EngineBenchmark {
    static let beaconCount = 10_000
    static let regionCount = 100
    static let rate = 10.0           // packets per beacon per second of source time
    static let sourceSeconds = 100   // 10 M sightings per run

    /// `PROXIMA_BENCH_ENGINE_ROWS` (a comma-separated subset of record, receive, batch, distance)
    /// runs only those rows, so that a profile of one path is not diluted by the others.
    static func runs(_ row: String) -> Bool {
        guard let rows = ProcessInfo.processInfo.environment["PROXIMA_BENCH_ENGINE_ROWS"] else { return true }
        return rows.split(separator: ",").contains { $0 == row }
    }

    static func run() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        // 100 majors, 100 minors: each region is one major (one site), 100 beacons in it.
        let identities = (0..<beaconCount).map { BeaconIdentity(uuid: uuid, major: UInt16($0 / 100), minor: UInt16($0 % 100)) }
        let regions = try (0..<regionCount).map { try BeaconRegion(identifier: "site-\($0)", uuid: uuid, major: UInt16($0)) }

        // One source-second of packets: every beacon 10 times, in a shuffled order, with RSSI
        // from a table; replayed with advancing time.
        var generator = SplitMix(seed: 42)
        let perSecond = beaconCount * Int(rate)
        var order = (0..<perSecond).map { Int32($0 % beaconCount) }
        for index in stride(from: order.count - 1, to: 0, by: -1) {
            order.swapAt(index, Int(generator.next() % UInt64(index + 1)))
        }
        let rssi = (0..<perSecond).map { _ in Int8(-50 - Int(generator.next() % 45)) }
        let step = 1.0 / Double(perSecond)

        for (label, ranging) in [("monitoring 100 regions", false), ("monitoring + ranging 100 regions", true)] where runs("record") {
            var engine = makeEngine(regions: regions, ranging: ranging)
            let indices = identities.compactMap { engine.intern($0, measuredPower: .appleDefault) }
            var events: [BeaconEvent] = []
            events.reserveCapacity(1024)
            var eventCount = 0
            let time = measure {
                for second in 0..<sourceSeconds {
                    let base = Double(second)
                    for slot in 0..<perSecond {
                        engine.record(indices[Int(order[slot])], time: base + Double(slot) * step, rssi: rssi[slot], into: &events)
                        if events.count > 512 { eventCount += events.count; events.removeAll(keepingCapacity: true) }
                    }
                }
            }
            eventCount += events.count
            report("record(index:) \(label)", count: perSecond * sourceSeconds, time, extra: ", \(eventCount) events")
            if ranging { print("footprint: \(engine.footprint)") }
        }

        // The full Sighting path: identity lookup in the intern dictionary per packet.
        var engine = makeEngine(regions: regions, ranging: true)
        let sightings = (0..<perSecond).map { slot in
            Sighting(time: 0, receiver: "bench", address: BluetoothAddress(rawValue: UInt64(order[slot])), rssi: rssi[slot],
                     frame: .iBeacon(IBeaconFrame(identity: identities[Int(order[slot])])))
        }
        var events: [BeaconEvent] = []
        let seconds = Int(ProcessInfo.processInfo.environment["PROXIMA_BENCH_RECEIVE_SECONDS"] ?? "20")!
        if runs("receive") {
            let time = measure {
                for second in 0..<seconds {
                    for slot in 0..<perSecond {
                        var sighting = sightings[slot]
                        sighting.time = Double(second) + Double(slot) * step
                        engine.receive(sighting, into: &events)
                        if events.count > 512 { events.removeAll(keepingCapacity: true) }
                    }
                }
            }
            report("receive(Sighting) monitoring + ranging 100 regions", count: perSecond * seconds, time)
        }

        // The same sightings in batches of 256, as a gateway's upload or a capture file's
        // buffer arrives: still one identity lookup per packet, with the lookups prefetched.
        if runs("batch") {
            engine = makeEngine(regions: regions, ranging: true)
            events.removeAll(keepingCapacity: true)
            let batchSize = 256
            var batch = sightings
            let batchTime = measure {
                for second in 0..<seconds {
                    for slot in 0..<perSecond { batch[slot].time = Double(second) + Double(slot) * step }
                    for start in stride(from: 0, to: perSecond, by: batchSize) {
                        engine.receive(contentsOf: batch[start..<Swift.min(start + batchSize, perSecond)], into: &events)
                        if events.count > 512 { events.removeAll(keepingCapacity: true) }
                    }
                }
            }
            report("receive(contentsOf:) batches of \(batchSize), monitoring + ranging 100 regions", count: perSecond * seconds, batchTime)
        }

        // What a distance per sample would add (the engine computes it once per beacon per cycle).
        for (label, model) in [("log-distance estimate alone", DistanceModel.freeSpace),
                               ("robust estimate alone (general path; the engine precomputes it)", DistanceModel.default)] where runs("distance") {
            var sum = 0.0
            let distanceTime = measure {
                for slot in 0..<10_000_000 {
                    sum += model.distance(rssi: Double(rssi[slot % perSecond]), measuredPower: .appleDefault) ?? 0
                }
            }
            report(label, count: 10_000_000, distanceTime, extra: String(format: " (checksum %.0f)", sum))
        }
    }

    static func report(_ label: String, count: Int, _ time: (wall: Double, cpu: Double), extra: String = "") {
        let total = Double(count)
        print(String(format: "%@: %.1f M/s per core on CPU time (%.1f ns each); %.1f M/s on wall time%@",
                     label, total / time.cpu / 1e6, time.cpu / total * 1e9, total / time.wall / 1e6, extra))
    }

    static func makeEngine(regions: [BeaconRegion], ranging: Bool) -> BeaconEngine {
        var engine = BeaconEngine()
        for region in regions {
            _ = try? engine.startMonitoring(region)
            if ranging { engine.startRanging(region) }
        }
        return engine
    }
}

/// SplitMix64, so every run feeds the same packets.
typealias SplitMix = SplitMix64
