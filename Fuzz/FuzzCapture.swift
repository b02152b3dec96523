// libFuzzer entry for BeaconHCI's capture readers (btsnoop datalinks 1001/1002, pcap link types
// 201/187/256 in both byte orders and time resolutions) and for replaying what they read. Built
// by `Fuzz/run.sh capture` into the BeaconHCI module; a trap, an ASan report or a broken
// invariant below is a finding. The input is a whole capture file.
import BeaconKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCapture(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    let capture: Capture
    do {
        capture = try CaptureReader.parse(bytes)
    } catch {
        requireFuzz(error.offset >= 0 && error.offset <= count, "offset \(error.offset) outside \(count) bytes: \(error)")
        return 0
    }
    // Every packet has its record, in file order, inside the file.
    requireFuzz(capture.records.count == capture.packets.count, "\(capture.records.count) records for \(capture.packets.count) packets")
    var previous: Capture.RecordLocation?
    for location in capture.records {
        requireFuzz(location.offset >= 0 && location.offset < count, "\(location) outside \(count) bytes")
        if let previous {
            requireFuzz(location.index > previous.index && location.offset > previous.offset, "\(location) after \(previous)")
        }
        previous = location
    }
    // A record header is at least 16 bytes, so the packets are bounded by the file.
    requireFuzz((capture.packets.count + capture.skippedRecords) * 16 <= count, "\(capture.packets.count) packets from \(count) bytes")

    // Replay: the decoder and the pacing schedule see every packet as a replay would.
    let decoder = SightingDecoder(receiver: "fuzz")
    var schedule = ReplaySchedule(start: capture.packets.first?.microseconds ?? 0, maximumGap: CaptureReplay.defaultMaximumGap)
    var sightingCount = 0
    for (packet, location) in zip(capture.packets, capture.records) {
        let outcome = decoder.decode(packet)
        sightingCount += outcome.sightings.count
        for failure in outcome.malformed {
            requireFuzz(failure.offset >= 0 && failure.offset <= packet.packet.body.count,
                        "report error offset \(failure.offset) outside \(packet.packet.body.count) bytes: \(failure)")
        }
        do {
            let offset = try schedule.offset(of: packet.microseconds, at: location)
            requireFuzz(offset >= 0 && offset.isFinite, "replay offset \(offset) for \(location)")
        } catch {
            requireFuzz(error.field.hasPrefix("record \(location.index)"), "pacing error names \(error.field), not \(location)")
        }
    }
    requireFuzz(CaptureReplay.allSightings(capture: capture, receiver: "fuzz").count == sightingCount, "allSightings disagrees")
    return 0
}

private func requireFuzz(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
