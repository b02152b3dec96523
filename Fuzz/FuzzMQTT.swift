// libFuzzer entry for BeaconMQTT's packet decoder. Built by `Fuzz/run.sh mqtt` together with
// the codec sources; a trap, an ASan report or a broken invariant below is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMQTT(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let decoder = MQTTPacketDecoder(maximumPacketSize: 4096, maximumFilterCount: 64)
    var position = 0
    // A stream of packets, as the client reads them: each one from where the last ended.
    while position < count {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[position...])
        do {
            guard let (packet, length) = try decoder.decode(rest) else { break }
            require(length > 0 && length <= rest.count, "length \(length) of \(rest.count) bytes")
            // What was read encodes to bytes that decode to the same packet.
            let again = try packet.encoded()
            let reread = try decoder.decode(again)
            require(reread?.packet == packet && reread?.length == again.count, "\(packet) did not survive re-encoding")
            position += length
        } catch let error as MQTTDecodeError {
            require(error.offset >= 0 && error.offset <= rest.count, "offset \(error.offset) outside \(rest.count) bytes: \(error)")
            break
        } catch {
            fatalError("a decoded packet could not be encoded: \(error)")
        }
    }
    return 0
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
