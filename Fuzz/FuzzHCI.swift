// libFuzzer entry for BeaconHCI's H4 framer and HCI event parsing. Built by `Fuzz/run.sh hci`
// into the BeaconHCI module (so internal API is reachable); a trap, an ASan report or a broken
// invariant below is a finding. The input is an H4 byte stream as a UART or socket delivers it.
import BeaconKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCI(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))

    // One read of the whole stream.
    var whole = H4Framer()
    var wholeFailure: H4FramingError?
    var packets: [HCIPacket]
    do { packets = try whole.append(bytes) } catch {
        wholeFailure = error
        packets = error.completedPackets
    }
    if let wholeFailure {
        requireFuzz(wholeFailure.offset >= 0 && wholeFailure.offset < count && bytes[wholeFailure.offset] == wholeFailure.found,
                    "framing error at \(wholeFailure.offset) of \(count) bytes names the wrong byte: \(wholeFailure)")
    } else {
        let framed = packets.reduce(0) { $0 + $1.h4Bytes.count }
        requireFuzz(framed + whole.pendingByteCount == count, "\(framed) framed + \(whole.pendingByteCount) pending of \(count) bytes")
    }

    // The same stream in two reads, split where the first byte says: reads may end anywhere, so
    // the packets and the error are the same.
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (count + 1)
    var pieces = H4Framer()
    var piecesFailure: H4FramingError?
    var piecePackets: [HCIPacket] = []
    do {
        piecePackets += try pieces.append(bytes[..<split])
        piecePackets += try pieces.append(bytes[split...])
    } catch {
        piecesFailure = error
        piecePackets += error.completedPackets
    }
    requireFuzz(piecePackets == packets && piecesFailure?.offset == wholeFailure?.offset,
                "split at \(split): \(piecePackets.count) packets, error \(String(describing: piecesFailure)); in one read \(packets.count), \(String(describing: wholeFailure))")

    // Resynchronising accounts for every byte: dropped, framed or pending.
    var lenient = H4Framer(policy: .resynchronize)
    guard let resynchronised = try? lenient.append(bytes) else { fatalError("the resynchronising framer threw") }
    let kept = resynchronised.reduce(0) { $0 + $1.h4Bytes.count }
    requireFuzz(lenient.droppedBytes + kept + lenient.pendingByteCount == count,
                "dropped \(lenient.droppedBytes) + framed \(kept) + pending \(lenient.pendingByteCount) ≠ \(count)")

    for packet in resynchronised { checkPacket(packet) }
    // The input read as one event body without H4 framing, as a raw HCI socket delivers it.
    checkEventBody(bytes)
    return 0
}

private func checkPacket(_ packet: HCIPacket) {
    switch packet.type {
    case .event:
        // The framer took the length from the header, so the event must read back as it was.
        guard let event = try? HCIEvent(body: packet.body) else { fatalError("framed event \(packet.body) does not read") }
        requireFuzz(event.body == packet.body, "event \(event) re-encodes differently")
        checkEventBody(packet.body)
    case .command:
        guard let command = try? HCICommand(body: packet.body) else { fatalError("framed command \(packet.body) does not read") }
        requireFuzz(command.body == packet.body, "command \(command) re-encodes differently")
    default:
        break
    }
}

private func checkEventBody(_ body: [UInt8]) {
    do {
        let event = try HCIEvent(body: body)
        if let complete = try? CommandComplete(event: event) {
            requireFuzz(complete.event == event, "Command Complete \(complete) re-encodes differently")
            _ = complete.status
        }
        if let status = try? CommandStatus(event: event) {
            requireFuzz(status.event == event, "Command Status \(status) re-encodes differently")
        }
    } catch {
        requireFuzz(error.offset >= 0 && error.offset <= body.count, "offset \(error.offset) outside \(body.count) bytes: \(error)")
    }
    let received = TimestampedPacket(microseconds: 0, direction: .received, packet: HCIPacket(type: .event, body: body))
    let outcome = SightingDecoder(receiver: "fuzz").decode(received)
    for failure in outcome.malformed {
        requireFuzz(failure.offset >= 0 && failure.offset <= body.count, "offset \(failure.offset) outside \(body.count) bytes: \(failure)")
    }
    // A report is at least 10 bytes after the 4-byte LE Meta header, so the sightings are bounded by the event.
    requireFuzz(outcome.sightings.count <= body.count, "\(outcome.sightings.count) sightings from \(body.count) bytes")
}

private func requireFuzz(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
