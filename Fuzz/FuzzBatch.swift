// libFuzzer entry for the server's sighting batch decoders: the JSON batch of POST /v1/sightings
// (with the server's checks and its diagnosis of a refused body), the compact binary batch
// (application/vnd.proxima.sightings.v1, BeaconGateway) and April Brother gateway uploads in
// MessagePack and JSON. Built by `Fuzz/run.sh batch` into a module named BeaconServer from the
// dependency-free files only; a trap, an ASan report or a broken invariant below is a finding.
// Every input is offered to every decoder, as the server offers any body to the decoder its
// content type names.
import BeaconGateway
import BeaconKit
import Foundation

/// A fixed server clock, so a run replays exactly: 2026-11-27T00:00:00Z.
private let now = 1_795_737_600.0

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBatch(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let window = SightingTimeWindow.default
    let limits = CompactSightingBatch.Limits(maxSightings: 5000, times: (now - window.past)...(now + window.future))

    do {
        let batch = try CompactSightingBatch.decode(bytes: bytes, limits: limits)
        requireFuzz(batch.sightings.count * 20 <= count, "\(batch.sightings.count) sightings from \(count) bytes")
        // The JSON form carries the same batch: what the compact form read survives it.
        guard let json = try? JSONEncoder().encode(batch) else { fatalError("a compact batch has no JSON form") }
        guard let again = try? JSONDecoder().decode(SightingBatch.self, from: json) else {
            fatalError("the JSON form of a compact batch does not decode: \(String(decoding: json, as: UTF8.self))")
        }
        requireFuzz(again.sequence == batch.sequence && again.sightings == batch.sightings,
                    "a compact batch changed through JSON: \(String(decoding: json, as: UTF8.self))")
        checkServerRules(batch)
    } catch {
        requireFuzz(error.offset >= 0 && error.offset <= count && !error.field.isEmpty, "compact refusal \(error) outside \(count) bytes")
    }

    let data = Data(bytes)
    if let batch = try? JSONDecoder().decode(SightingBatch.self, from: data) {
        checkServerRules(batch)
    } else if let diagnosis = SightingBatch.diagnose(data) {
        requireFuzz(diagnosis.field.hasPrefix("sightings["), "a diagnosis naming \(diagnosis.field)")
    }

    let array = Array(bytes)
    for upload in [try? AprilBrotherUpload.decode(messagePack: array, maxDevices: 5000),
                   try? AprilBrotherUpload.decode(json: array, maxDevices: 5000)] {
        guard let upload else { continue }
        requireFuzz(upload.frames.count <= 5000, "\(upload.frames.count) devices")
        let (sightings, skipped) = upload.sightings(receiver: "fuzz", time: now)
        requireFuzz(skipped <= upload.frames.count && sightings.count >= upload.frames.count - skipped,
                    "\(sightings.count) sightings, \(skipped) skipped of \(upload.frames.count) frames")
    }
    return 0
}

/// The server's checks on a decoded batch either pass or name a field of the batch.
private func checkServerRules(_ batch: SightingBatch) {
    do {
        try batch.validate(now: now)
    } catch {
        requireFuzz(error.field == "sequence" || error.field.hasPrefix("sightings["), "a refusal naming \(error.field)")
    }
}

private func requireFuzz(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
