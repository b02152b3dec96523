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
        // A run of H4 events scans like its events one by one: twice the bytes, twice the
        // events and frames; a single event scans as a stream exactly as on its own.
        if bytes.first == 0x04 {
            var once = 0, twice = 0, alone = 0
            let onceEvents = try? LocatedFrame.scan(h4Events: buffer) { _, _ in once += 1 }
            let doubled = bytes + bytes
            let twiceEvents = doubled.withUnsafeBytes { doubledBuffer in
                try? LocatedFrame.scan(h4Events: doubledBuffer) { _, _ in twice += 1 }
            }
            // (A truncated event can swallow its copy, so only a stream that scans is compared.)
            if let onceEvents {
                require(twiceEvents == 2 * onceEvents && twice == 2 * once, "doubled stream: \(String(describing: twiceEvents)) events, \(twice) frames")
            }
            let aloneScanned = (try? LocatedFrame.scan(hciEvent: buffer) { _, _ in alone += 1 }) != nil
            if aloneScanned {
                require(onceEvents == 1 && once == alone, "event scans alone (\(alone) frames) but not as a stream")
            }
        }
    }
    return 0
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
