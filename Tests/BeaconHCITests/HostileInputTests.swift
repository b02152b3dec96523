import BeaconHCI
import BeaconKit
import Foundation
import Testing

/// Captures and controller bytes are untrusted: damaged input must give errors, never a crash.
@Suite struct HostileInputTests {
    /// A small deterministic generator (SplitMix64), so a failure replays exactly.
    typealias SplitMix = SplitMix64

    static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil))))
    }

    @Test(arguments: ["btvirt-scan.btsnoop", "btvirt-scan.pcap"])
    func corruptedCapturesNeverCrash(file: String) throws {
        let original = try Self.fixture(file)
        var random = SplitMix(state: 0x5EED)
        var parsed = 0
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            guard let capture = try? CaptureReader.parse(bytes) else { continue }
            parsed += 1
            // Whatever survives parsing must also survive decoding into sightings.
            _ = CaptureReplay.allSightings(capture: capture, receiver: "fuzz")
        }
        #expect(parsed > 0, "most single-byte damage lands in packet data and still parses")
    }

    @Test func randomBytesOnH4EitherFrameOrFailCleanly() {
        var random = SplitMix(state: 0xB17E)
        for _ in 0..<2000 {
            var framer = H4Framer()
            let bytes = (0..<Int.random(in: 1...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            do {
                for packet in try framer.append(bytes) where packet.type == .event {
                    _ = SightingDecoder(receiver: "fuzz").decode(
                        TimestampedPacket(microseconds: 0, direction: .received, packet: packet))
                    _ = try? HCIEvent(body: packet.body)
                }
            } catch {
                #expect(error.offset < bytes.count)
            }
        }
    }

    @Test func randomLEMetaEventsNeverCrashTheDecoder() {
        var random = SplitMix(state: 0xAD)
        for _ in 0..<5000 {
            let length = Int.random(in: 0...255, using: &random)
            var body: [UInt8] = [0x3E, UInt8(length)]
            body += (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            if length > 0 { body[2] = Bool.random(using: &random) ? 0x02 : 0x0D }
            let outcome = SightingDecoder(receiver: "fuzz").decode(
                TimestampedPacket(microseconds: 0, direction: .received, packet: HCIPacket(type: .event, body: body)))
            if length > 0, (try? AdvertisingReport.decode(hciEvent: body)) == nil {
                // A broken event is reported once and yields nothing.
                #expect(outcome.sightings.isEmpty && outcome.malformed.count == 1)
            }
        }
    }
}
