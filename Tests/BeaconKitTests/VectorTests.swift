import Foundation
import Testing
@testable import BeaconKit

/// One entry of Fixtures/vectors.json (see Fixtures/README.md for provenance).
struct Vector: Decodable, Sendable, CustomTestStringConvertible {
    struct Expected: Decodable, Sendable, Hashable {
        var uuid: String
        var major: UInt16
        var minor: UInt16
        var power: Int8
        var rssi: Int8?
    }

    var hex: String
    var format: String
    var expect: String
    var source: String
    var uuid: String?
    var major: UInt16?
    var minor: UInt16?
    var power: Int8?
    var rssi: Int8?
    var all_ibeacons: [Expected]?
    var note: String?

    var bytes: [UInt8] { (try? Hex.bytes(hex)) ?? [] }
    var isAccept: Bool { expect == "accept" }
    var testDescription: String { "\(format) \(expect): \(note ?? source)" }

    /// The iBeacons the vector must decode to, in order.
    var expectedBeacons: [Expected] {
        if let all_ibeacons { return all_ibeacons }
        guard let uuid, let major, let minor, let power else { return [] }
        return [Expected(uuid: uuid, major: major, minor: minor, power: power, rssi: rssi)]
    }

    static let all: [Vector] = {
        guard let url = Bundle.module.url(forResource: "vectors", withExtension: "json", subdirectory: "Fixtures"),
              let data = try? Data(contentsOf: url),
              let vectors = try? JSONDecoder().decode([Vector].self, from: data) else { return [] }
        return vectors
    }()
}

@Test func theFixtureHoldsAllThirtyOneVectors() {
    #expect(Vector.all.count == 31)
    #expect(Vector.all.filter(\.isAccept).count == 14)
}
