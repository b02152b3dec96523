import BeaconKit
import CReferenceDecoder
import Foundation

/// Decode throughput on a realistic mix of advertising report events, against a C loop that
/// does only the checks needed to read the same fields safely. Both walk one buffer of H4
/// events, one core, in one run, so the ratio is meaningful even on a noisy machine.
enum CodecBenchmark {
    struct Totals: Equatable {
        var iBeacons = 0
        var eddystone = 0
        var checksum: UInt64 = 0
    }

    static func run() throws {
        let (stream, reports) = makeStream(events: 20_000)
        print("buffer: \(stream.count) bytes, \(reports) advertising reports (55% iBeacon, 30% other Apple, 15% Eddystone; 10% of events carry 2 reports)")

        let swift = try stream.withUnsafeBytes { buffer in try decodeWithBeaconKit(buffer) }
        let c = stream.withUnsafeBytes { buffer in decodeWithC(buffer) }
        guard swift == Totals(iBeacons: Int(c.ibeacons), eddystone: Int(c.eddystone), checksum: c.checksum),
              c.reports == UInt64(reports) else {
            print("MISMATCH: BeaconKit \(swift), C \(c)")
            exit(1)
        }
        print("both found \(swift.iBeacons) iBeacons and \(swift.eddystone) Eddystone frames (checksum \(swift.checksum))")

        // Trials alternate between the two so that both see the same machine load; each is
        // the best of several short runs.
        var swiftRates: [Double] = [], cRates: [Double] = []
        for trial in 1...7 {
            let swiftRate = try stream.withUnsafeBytes { buffer in
                try rate(reports: reports) { _ = try decodeWithBeaconKit(buffer) }
            }
            let cRate = try stream.withUnsafeBytes { buffer in
                try rate(reports: reports) { _ = decodeWithC(buffer) }
            }
            swiftRates.append(swiftRate)
            cRates.append(cRate)
            print("trial \(trial): BeaconKit \(millions(swiftRate)) M frames/s, C reference \(millions(cRate)) M frames/s, ratio \(String(format: "%.2f", swiftRate / cRate))")
        }
        let ratios = zip(swiftRates, cRates).map { $0 / $1 }.sorted()
        let swiftBest = swiftRates.max()!, cBest = cRates.max()!
        print("best: BeaconKit \(millions(swiftBest)) M frames/s, C reference \(millions(cBest)) M frames/s, "
              + "ratio of bests \(String(format: "%.2f", swiftBest / cBest))x, median trial ratio \(String(format: "%.2f", ratios[ratios.count / 2]))x")
    }

    /// The library's allocation-free path over the same H4 stream: every event and report
    /// checked completely, every beacon frame located and checked (Eddystone-URL characters
    /// included), iBeacons read into values.
    static func decodeWithBeaconKit(_ buffer: UnsafeRawBufferPointer) throws -> Totals {
        var totals = Totals()
        try LocatedFrame.scan(h4Events: buffer) { header, located in
            if let beacon = located.iBeacon(in: buffer) {
                totals.iBeacons &+= 1
                let power = Int64(beacon.measuredPower.dBm), rssi = Int64(header.rssi ?? 127)
                totals.checksum &+= UInt64(beacon.identity.major) &+ UInt64(beacon.identity.minor)
                    &+ UInt64(bitPattern: power) &+ UInt64(bitPattern: rssi) &+ UInt64(beacon.identity.uuid.uuid.0)
            } else if located.format != .altBeacon {
                totals.eddystone &+= 1
            }
        }
        return totals
    }

    static func decodeWithC(_ buffer: UnsafeRawBufferPointer) -> creference_totals {
        var totals = creference_totals()
        let status = creference_decode(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.count, &totals)
        precondition(status == 0, "the C reference refused the benchmark stream")
        return totals
    }

    /// Reports per second: the fastest of five runs of 0.1 s of repeated passes, so that a
    /// moment of load from other processes does not count against either side.
    static func rate(reports: Int, _ pass: () throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        var best = 0.0
        for _ in 0..<5 {
            var passes = 0
            let start = clock.now
            var elapsed = Duration.zero
            repeat {
                try pass()
                passes += 1
                elapsed = clock.now - start
            } while elapsed < .milliseconds(100)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            best = max(best, Double(passes * reports) / seconds)
        }
        return best
    }

    static func millions(_ rate: Double) -> String { String(format: "%.1f", rate / 1e6) }

    // MARK: - The mix

    static func makeStream(events: Int) -> (bytes: [UInt8], reports: Int) {
        var generator = SplitMix(state: 0xC0DEC)
        let uuids = (0..<8).map { _ in UUID() }
        var stream: [UInt8] = []
        var reports = 0
        for _ in 0..<events {
            let reportCount = Int.random(in: 0..<10, using: &generator) == 0 ? 2 : 1
            let batch = (0..<reportCount).map { _ in
                AdvertisingReport(kind: .legacy(eventType: 3), addressType: 1,
                                  address: BluetoothAddress(rawValue: generator.next()),
                                  rssi: Int8.random(in: -100 ... -30, using: &generator),
                                  data: advertisingData(using: &generator, uuids: uuids))
            }
            reports += batch.count
            stream += [AdvertisingReport.Code.h4EventPacket.rawValue] + AdvertisingReport.legacyEventPacket(batch)
        }
        return (stream, reports)
    }

    static func advertisingData(using generator: inout SplitMix, uuids: [UUID]) -> [UInt8] {
        let roll = Int.random(in: 0..<100, using: &generator)
        func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        switch roll {
        case 0..<55:
            let identity = BeaconIdentity(uuid: uuids[Int.random(in: 0..<uuids.count, using: &generator)],
                                          major: .random(in: 0...20, using: &generator), minor: .random(in: 0...500, using: &generator))
            return IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59)).advertisingData(flags: roll < 40 ? 0x1A : 0x06)
        case 55..<70:
            // Nearby Info (type 0x10) as iPhones send it, with flags.
            var writer = ADWriter()
            writer.appendFlags(0x1A)
            writer.appendManufacturerData(company: .apple, payload: [0x10, 0x05] + randomBytes(5))
            return writer.bytes
        case 70..<78:
            // Find My / offline finding (type 0x12), no flags.
            var writer = ADWriter()
            writer.appendManufacturerData(company: .apple, payload: [0x12, 0x19] + randomBytes(25))
            return writer.bytes
        case 78..<85:
            // Proximity pairing (AirPods, type 0x07).
            var writer = ADWriter()
            writer.appendManufacturerData(company: .apple, payload: [0x07, 0x19] + randomBytes(25))
            return writer.bytes
        case 85..<91:
            let frame = EddystoneFrame.uid(namespace: randomBytes(10), instance: randomBytes(6), txPowerAt0m: -20)
            return frame.advertisingData()!
        case 91..<94:
            return EddystoneFrame.url(txPowerAt0m: -20, url: "https://www.example.com/").advertisingData()!
        default:
            return EddystoneFrame.tlm(EddystoneTelemetry(batteryMillivolts: 3000, temperatureCelsius: 21.25,
                                                         advertisingCount: UInt32.random(in: 0...1_000_000, using: &generator),
                                                         uptimeDeciseconds: 1000)).advertisingData()!
        }
    }

    typealias SplitMix = SplitMix64
}
