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
        let originalCapture = try CaptureReader.parse(original)
        let originalSightings = CaptureReplay.allSightings(capture: originalCapture, receiver: "fuzz")
        #expect(originalSightings.count == 2)
        var random = SplitMix(state: 0x5EED)
        var parsed = 0
        var unchangedReports = 0
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            guard let capture = try? CaptureReader.parse(bytes) else { continue }
            parsed += 1
            let sightings = CaptureReplay.allSightings(capture: capture, receiver: "fuzz")
            let reportEvents = capture.packets.filter(Self.isAdvertisingReportEvent)
            if reportEvents == originalCapture.packets.filter(Self.isAdvertisingReportEvent) {
                // Damage elsewhere (commands, other events) cannot change what was heard.
                unchangedReports += 1
                #expect(sightings == originalSightings)
            } else {
                // Each report gives at most one frame here, stamped with its own event's time.
                let reportCount = reportEvents.reduce(0) { $0 + Int($1.packet.body.count > 3 ? $1.packet.body[3] : 0) }
                #expect(sightings.count <= reportCount)
                #expect(sightings.allSatisfy { sighting in reportEvents.contains { $0.seconds == sighting.time } })
            }
        }
        #expect(parsed > 0, "most single-byte damage lands in packet data and still parses")
        #expect(unchangedReports > 0 && unchangedReports < parsed, "both kinds of damage are tried")
    }

    @Test func randomBytesOnH4EitherFrameOrFailCleanly() {
        var random = SplitMix(state: 0xB17E)
        for _ in 0..<2000 {
            var framer = H4Framer()
            let bytes = (0..<Int.random(in: 1...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            do {
                for packet in try framer.append(bytes) where packet.type == .event {
                    // The framer cut the packet by its own length byte, so it is a whole event.
                    let event = try? HCIEvent(body: packet.body)
                    #expect(event?.parameters.count == packet.body.count - 2)
                    let outcome = SightingDecoder(receiver: "fuzz").decode(
                        TimestampedPacket(microseconds: 0, direction: .received, packet: packet))
                    if !Self.isAdvertisingReportEvent(TimestampedPacket(microseconds: 0, direction: .received, packet: packet)) {
                        #expect(outcome == SightingDecoder.Outcome(), "only advertising reports give sightings or errors")
                    } else if let reports = try? AdvertisingReport.decode(hciEvent: packet.body) {
                        #expect(outcome.sightings.count + outcome.malformed.count <= reports.count)
                    } else {
                        #expect(outcome.sightings.isEmpty && outcome.malformed.count == 1)
                    }
                }
            } catch {
                #expect(error.offset < bytes.count)
            }
        }
    }

    static func isAdvertisingReportEvent(_ packet: TimestampedPacket) -> Bool {
        let body = packet.packet.body
        return packet.direction == .received && packet.packet.type == .event && body.count >= 3 && body[0] == 0x3E
            && (body[2] == 0x02 || body[2] == 0x0D)
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

/// Damaged timestamps: refused with the record and its offset, never a replay that waits for years.
@Suite struct CaptureTimestampTests {
    @Test func pcapMicrosecondsOfASecondOrMoreAreRefused() throws {
        var bytes = try HostileInputTests.fixture("btvirt-scan.pcap")
        // Record 0 starts after the 24-byte file header; ts_usec is its second little-endian word.
        let tsUsec = 24 + 4
        bytes.replaceSubrange(tsUsec..<tsUsec + 4, with: [0x40, 0x42, 0x0F, 0x00])  // 1,000,000
        #expect(throws: DecodeError(field: "capture record 0 timestamp fraction (ts_usec)", offset: tsUsec,
                                     expected: "0…999999 (microseconds within the second)", found: "1000000")) {
            try CaptureReader.parse(bytes)
        }
        bytes.replaceSubrange(tsUsec..<tsUsec + 4, with: [0x3F, 0x42, 0x0F, 0x00])  // 999,999 is the last valid value
        #expect(throws: Never.self) { try CaptureReader.parse(bytes) }
    }

    @Test(.timeLimit(.minutes(2)))
    func aDamagedTimestampEndsAPacedReplayWithTheRecordAndOffset() async throws {
        var bytes = try HostileInputTests.fixture("btvirt-scan.btsnoop")
        let capture = try CaptureReader.parse(bytes)
        let decoder = SightingDecoder(receiver: "r")
        let paced = try #require(capture.packets.indices.last { !decoder.decode(capture.packets[$0]).sightings.isEmpty })
        let record = capture.records[paced]
        // The btsnoop timestamp is the 8 big-endian bytes after the four 32-bit record fields:
        // push it ten years on, as one flipped high byte does.
        let stamp = record.offset + 16
        let tenYears: UInt64 = 10 * 365 * 86_400 * 1_000_000
        let damaged = bytes[stamp..<stamp + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } + tenYears
        bytes.replaceSubrange(stamp..<stamp + 8, with: (0..<8).reversed().map { UInt8(truncatingIfNeeded: damaged >> (8 * UInt64($0))) })
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("damaged-\(UUID()).btsnoop")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }

        // The test's time limit guards against the old behaviour (sleeping for ten years); the
        // replay itself fails as soon as it reaches the record.
        var message = "the replay finished without an error"
        do {
            for try await _ in try CaptureReplay.sightings(url: url, speed: 1, receiver: "r") {}
        } catch {
            message = "\(error)"
        }
        #expect(message.contains("record \(record.index) timestamp at byte \(record.offset)"), "\(message)")
        #expect(message.contains("expected at most 3600 s after the packet before it"), "\(message)")
    }
}
