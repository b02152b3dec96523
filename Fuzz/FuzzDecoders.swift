// libFuzzer entry for BeaconKit's decoders. Built by Fuzz/run.sh together with the codec
// sources; a trap, an ASan report or a broken invariant below is a finding.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))

    for format in [nil] + InputFormat.allCases.map(Optional.some) {
        do {
            let decoded = try InputDecoder.decode(bytes, format: format)
            _ = decoded.noIBeaconReason
            for beacon in decoded.beacons { _ = beacon.description }
        } catch {
            require(error.offset >= 0 && error.offset <= max(count, 1), "offset \(error.offset) outside \(count) bytes: \(error)")
        }
    }

    if let frames = try? BeaconFrame.decodeAll(advertisingData: bytes) {
        for case .iBeacon(let frame) in frames {
            // What was read must re-encode to bytes that decode to the same frame.
            let again = try? IBeaconFrame(advertisingData: frame.advertisingData())
            require(again == frame, "iBeacon \(frame) did not survive re-encoding")
        }
    }
    _ = try? IBeaconFrame(manufacturerData: bytes)
    _ = try? EddystoneFrame(serviceData: bytes)
    _ = AltBeaconFrame(manufacturerData: bytes)
    _ = try? ADStructure.readAll(bytes)

    if let reports = try? AdvertisingReport.decode(hciEvent: bytes) {
        // Reports re-encoded as a legacy event decode to the same reports.
        let legacy = reports.filter { if case .legacy = $0.kind { true } else { false } }
        if legacy.count == reports.count {
            require((try? AdvertisingReport.decode(hciEvent: AdvertisingReport.legacyEventPacket(reports))) == reports,
                    "legacy reports did not survive re-encoding")
        }
    }
    bytes.withUnsafeBytes { buffer in
        try? BeaconFrame.forEachFrame(inHCIEvent: buffer) { _, _ in }
        try? BeaconFrame.forEachFrame(inAdvertisingData: buffer) { _ in }
        // The allocation-free scan must find exactly what the value-building decoder finds.
        var located: [BeaconFrame] = []
        let scanned = Result { () throws(DecodeError) in
            try LocatedFrame.scan(advertisingData: buffer) { located.append($0.frame(in: buffer)) }
        }
        if case .success = scanned {
            require((try? BeaconFrame.decodeAll(advertisingData: bytes)) == located, "scan and decodeAll disagree")
        }
        // The one-comparison iBeacon shortcut must agree with the full walk.
        if let shortcut = FrameScanner.soleIBeacon(buffer, 0..<buffer.count) {
            var walked: [LocatedFrame] = []
            var position = 0
            while let frame = try? FrameScanner.nextFrame(buffer, &position, end: buffer.count) { walked.append(frame) }
            require(walked == [shortcut], "shortcut \(shortcut) but walk found \(walked)")
        }
        // A stream of H4 events scans to the same frames as its events one by one, and fails
        // when they fail.
        if bytes.first == 0x04 {
            var fromEvent = 0
            let eventScanned = (try? LocatedFrame.scan(hciEvent: buffer) { _, _ in fromEvent += 1 }) != nil
            let stream = bytes + bytes
            var fromStream = 0
            let events = stream.withUnsafeBytes { streamBuffer in
                (try? LocatedFrame.scan(h4Events: streamBuffer) { _, _ in fromStream += 1 }) ?? -1
            }
            require(eventScanned ? (events == 2 && fromStream == 2 * fromEvent) : events == -1,
                    "h4 stream scan disagrees with event scan: \(events) events, \(fromStream) frames vs \(fromEvent)")
        }
    }
    return 0
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
