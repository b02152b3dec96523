import BeaconKit
import Foundation
import Testing

@Suite struct SightingMergeTests {
    static func source(_ receiver: String, times: [Double]) -> SightingSource {
        let frame = BeaconFrame.iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: UUID(), major: 1, minor: 1)))
        let stream = AsyncThrowingStream<Sighting, any Error> { continuation in
            for time in times { continuation.yield(Sighting(time: time, receiver: receiver, address: BluetoothAddress(rawValue: 1), rssi: -60, frame: frame)) }
            continuation.finish()
        }
        return SightingSource(sightings: stream, timing: .recorded, description: receiver)
    }

    @Test func mergedSourcesComeInTimeOrder() async throws {
        let merged = SightingSource.merged([Self.source("a", times: [0, 2, 4, 9]), Self.source("b", times: [1, 3]), Self.source("c", times: [])])
        var seen: [String] = []
        for try await sighting in merged.sightings { seen.append("\(sighting.receiver)\(Int(sighting.time))") }
        #expect(seen == ["a0", "b1", "a2", "b3", "a4", "a9"])
        #expect(merged.timing == .recorded && merged.description == "a; b; c")
    }

    @Test func aFailingSourceEndsTheMergeWithItsError() async throws {
        struct Broken: Error {}
        let broken = SightingSource(sightings: AsyncThrowingStream { $0.finish(throwing: Broken()) }, timing: .recorded)
        let merged = SightingSource.merged([Self.source("a", times: [0]), broken])
        await #expect(throws: Broken.self) {
            for try await _ in merged.sightings {}
        }
    }
}
