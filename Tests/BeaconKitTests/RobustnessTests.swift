import Testing
@testable import BeaconKit

/// Damaged input must come back as a value or a `DecodeError` that points inside the input,
/// and any iBeacon reported must really be in the bytes.
private func checkDecodesSafely(_ bytes: [UInt8]) {
    for format in [nil] + InputFormat.allCases.map(Optional.some) {
        do {
            let decoded = try InputDecoder.decode(bytes, format: format)
            for beacon in decoded.iBeacons {
                let payload = Array(beacon.frame.iBeacon!.manufacturerData.dropFirst(4))
                #expect(contains(bytes, payload), "iBeacon \(beacon) not present in \(Hex.string(bytes))")
            }
        } catch {
            #expect((0...max(bytes.count, 1)).contains(error.offset), "\(error) for \(Hex.string(bytes)) as \(String(describing: format))")
        }
    }
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
}

@Suite("Damaged input")
struct RobustnessTests {
    @Test(arguments: Vector.all)
    func everyPrefixDecodesWithoutACrash(vector: Vector) {
        let bytes = vector.bytes
        for length in 0...bytes.count { checkDecodesSafely(Array(bytes.prefix(length))) }
    }

    @Test(arguments: Vector.all)
    func everySingleByteFlipDecodesWithoutACrash(vector: Vector) {
        let bytes = vector.bytes
        for index in bytes.indices {
            for mask: UInt8 in [0xFF, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80] {
                var flipped = bytes
                flipped[index] ^= mask
                checkDecodesSafely(flipped)
            }
        }
    }

    @Test func truncatedPrefixesOfAnIBeaconAreErrorsNotBeacons() throws {
        let full = try Hex.bytes("0201061aff4c0002154142434445464748494041424344454600010002f8")
        for length in 9..<full.count {
            #expect(throws: DecodeError.self) { try BeaconFrame.decodeAll(advertisingData: Array(full.prefix(length))) }
        }
    }
}
