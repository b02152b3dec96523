import Foundation
import Testing
@testable import BeaconKit

@Suite("Allocation-free scanner")
struct ScannerTests {
    private func walk(_ bytes: [UInt8]) throws -> [LocatedFrame] {
        try bytes.withUnsafeBytes { buffer in
            var frames: [LocatedFrame] = []
            var position = 0
            while let frame = try FrameScanner.nextFrame(buffer, &position, end: buffer.count) { frames.append(frame) }
            return frames
        }
    }

    @Test func theIBeaconShortcutAgreesWithTheWalk() throws {
        let frames = (0..<200).map { index in
            IBeaconFrame(identity: BeaconIdentity(uuid: UUID(), major: UInt16(index), minor: UInt16(index * 7)),
                         measuredPower: MeasuredPower(Int8(truncatingIfNeeded: index)))
        }
        for (index, frame) in frames.enumerated() {
            let withFlags = frame.advertisingData(flags: UInt8(truncatingIfNeeded: index))
            let withoutFlags = Array(withFlags.dropFirst(3))
            for data in [withFlags, withoutFlags] {
                let shortcut = data.withUnsafeBytes { FrameScanner.soleIBeacon($0, 0..<$0.count) }
                #expect(shortcut != nil)
                #expect(try walk(data) == [try #require(shortcut)])
                #expect(data.withUnsafeBytes { shortcut?.iBeacon(in: $0) } == frame)
            }
        }
    }

    /// Over every vector: where the shortcut answers, the walk finds exactly its frame; where it
    /// declines, the data is not a lone iBeacon structure in the shortcut's layout. And the
    /// vectors do hold such advertisements, so the agreement is checked on real ones.
    @Test func theShortcutAgreesWithTheWalkOnEveryVector() throws {
        var answered = 0
        for vector in Vector.all {
            let bytes = vector.bytes
            let shortcut = bytes.withUnsafeBytes { FrameScanner.soleIBeacon($0, 0..<$0.count) }
            let walked = try? walk(bytes)
            if let shortcut {
                answered += 1
                #expect(walked == [shortcut], "\(vector)")
                continue
            }
            guard let walked, walked.count == 1, walked[0].format == .iBeacon else { continue }
            let inLayout = (bytes.count == 27 && bytes.starts(with: [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]))
                || (bytes.count == 30 && bytes.starts(with: [0x02, 0x01]) && bytes[3...].starts(with: [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]))
            #expect(!inLayout, "the shortcut declined a lone iBeacon advertisement: \(vector)")
        }
        #expect(answered > 0, "no vector is a lone iBeacon advertisement, so nothing was compared")
    }

    @Test func uuidsReadFromBytesMatchFoundation() {
        for _ in 0..<100 {
            let uuid = UUID()
            let read = uuid.bytes.withUnsafeBytes { $0.getUUID(at: 0) }
            #expect(read == uuid)
            #expect(read == UUID(uuid: uuid.uuid))
        }
    }

    @Test func anH4StreamScansLikeItsEvents() throws {
        let events = Vector.all.filter { $0.format.hasPrefix("hci") }.map(\.bytes)
        try #require(!events.isEmpty)
        let stream = events.flatMap { $0 } + events.flatMap { $0 }
        var fromStream: [BeaconFrame] = []
        let count = try stream.withUnsafeBytes { buffer in
            try LocatedFrame.scan(h4Events: buffer) { _, located in fromStream.append(located.frame(in: buffer)) }
        }
        let fromEvents = try events.flatMap { event in
            try AdvertisingReport.decode(hciEvent: event).flatMap { try BeaconFrame.decodeAll(advertisingData: $0.data) }
        }
        #expect(count == 2 * events.count)
        #expect(fromStream == fromEvents + fromEvents)
    }

    @Test func aDamagedStreamNamesThePacket() throws {
        let event = try #require(Vector.all.first { $0.format.hasPrefix("hci") }).bytes
        var stream = event + event
        stream[event.count] = 0x02
        #expect(throws: DecodeError(field: "H4 packet type", offset: event.count, expected: "0x04 (HCI event)", found: "0x02")) {
            try stream.withUnsafeBytes { try LocatedFrame.scan(h4Events: $0) { _, _ in } }
        }
        #expect(throws: DecodeError.self) {
            try Array(stream.dropLast()).withUnsafeBytes { try LocatedFrame.scan(h4Events: $0) { _, _ in } }
        }
    }
}
