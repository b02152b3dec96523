import Foundation
import Testing

/// The vectors of Tests/BeaconKitTests/Fixtures (provenance in its README), read from the
/// source tree so that there is one copy.
struct CLIVector: Decodable, Sendable, CustomTestStringConvertible {
    var hex: String
    var format: String
    var expect: String
    var uuid: String?
    var major: Int?
    var minor: Int?
    var power: Int?
    var rssi: Int?
    var note: String?

    var testDescription: String { "\(format) \(expect): \(note ?? hex)" }

    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../BeaconKitTests/Fixtures/vectors.json").standardizedFileURL

    /// The vectors, or none when the file cannot be read: test arguments cannot throw, so
    /// `fixtureIsReadWhole` checks that this list is the whole file.
    static let all: [CLIVector] = (try? load()) ?? []

    static func load() throws -> [CLIVector] {
        try JSONDecoder().decode([CLIVector].self, from: Data(contentsOf: url))
    }
}

/// The parameterized tests below take their cases from `CLIVector.all`; an empty list would
/// make them pass without running. The file held 14 accept and 17 reject vectors when this
/// was written, and vectors are only ever added.
@Test func fixtureIsReadWhole() throws {
    let vectors = try CLIVector.load()
    #expect(CLIVector.all.count == vectors.count)
    #expect(vectors.filter { $0.expect == "accept" }.count >= 14)
    #expect(vectors.filter { $0.expect == "reject" }.count >= 17)
}

private struct PrintedBeacon: Decodable, Equatable {
    var format: String
    var uuid: String
    var major: Int
    var minor: Int
    var measuredPower: Int
    var rssi: Int?
}

@Suite("proxima encode")
struct EncodeCommandTests {
    static let book = ["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "0", "--minor", "0"]

    @Test func printsTheBooksAdvertisingData() async throws {
        for power in [["--power", "-59"], ["--power=-59"], []] {
            let outcome = try await ProximaBinary.run(["encode"] + Self.book + power)
            #expect(outcome.status == 0)
            #expect(outcome.standardOutput == "02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000000000c5\n")
        }
    }

    @Test func printsTheRaspberryPiRecipe() async throws {
        let outcome = try await ProximaBinary.run(["encode"] + Self.book + ["--power", "-59", "--hcitool", "--device", "hci1"])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput == """
            hcitool -i hci1 cmd 0x08 0x0008 1e 02 01 1a 1a ff 4c 00 02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 00 00 00 c5 00
            hcitool -i hci1 cmd 0x08 0x0006 a0 00 a0 00 03 00 00 00 00 00 00 00 00 07 00
            hcitool -i hci1 cmd 0x08 0x000a 01

            """)
    }

    @Test func printsJSONWithTheChosenFlags() async throws {
        let outcome = try await ProximaBinary.run(["encode"] + Self.book + ["--flags", "0x06", "--power", "-70", "--json"])
        #expect(outcome.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any])
        #expect(object["uuid"] as? String == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        #expect(object["measuredPower"] as? Int == -70)
        #expect(object["flags"] as? Int == 6)
        #expect(object["advertisingData"] as? String == "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000000000ba")
    }

    @Test(arguments: [
        (["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "65536", "--minor", "0"], "major"),
        (["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "0", "--minor", "-1"], "minor"),
        (["--uuid", "E2C56DB5-DFFB-48D2-B060", "--major", "0", "--minor", "0"], "uuid"),
        (["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "0", "--minor", "0", "--power", "-129"], "power"),
        (["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "0", "--minor", "0", "--power", "128"], "power"),
        (["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "0", "--minor", "0", "--flags", "0x100"], "flags"),
    ])
    func refusesOutOfRangeInputNamingTheField(arguments: [String], field: String) async throws {
        let outcome = try await ProximaBinary.run(["encode"] + arguments)
        #expect(outcome.status != 0)
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError.contains("invalid \(field) '"))
    }
}

@Suite("proxima decode")
struct DecodeCommandTests {
    @Test(arguments: CLIVector.all.filter { $0.expect == "accept" })
    func acceptVectorPrintsTheIdentityAsJSON(vector: CLIVector) async throws {
        let outcome = try await ProximaBinary.run(["decode", "--json", vector.hex])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let first = try #require(outcome.standardOutput.split(separator: "\n").first)
        let beacon = try JSONDecoder().decode(PrintedBeacon.self, from: Data(first.utf8))
        #expect(beacon == PrintedBeacon(format: "iBeacon", uuid: try #require(vector.uuid).uppercased(),
                                        major: try #require(vector.major), minor: try #require(vector.minor),
                                        measuredPower: try #require(vector.power), rssi: vector.rssi))
    }

    @Test(arguments: CLIVector.all.filter { $0.expect == "reject" })
    func rejectVectorExitsNonZeroWithAReason(vector: CLIVector) async throws {
        let outcome = try await ProximaBinary.run(["decode", "--json", vector.hex])
        #expect(outcome.status != 0)
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError.hasPrefix("proxima: malformed: ") || outcome.standardError.hasPrefix("proxima: not an iBeacon: "),
                "\(outcome.standardError)")
    }

    @Test func readsStandardInputAndReportsEachFailure() async throws {
        let input = """
            # the book's example, then a truncated frame, then the same example with spaces
            02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000000000c5

            0201060303
            02 01 1a 1a ff 4c 00 02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 00 00 00 c5
            """
        let outcome = try await ProximaBinary.run(["decode"], input: input)
        #expect(outcome.status == 1)
        #expect(outcome.standardOutput.split(separator: "\n").count == 2)
        #expect(outcome.standardOutput.hasPrefix("iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major 0 minor 0 power -59 dBm"))
        #expect(outcome.standardError == "proxima: input 2: malformed: AD structure length at byte 3: expected at most 1 (the bytes left), found 3 (0x03)\n")
    }

    @Test func aForcedFormatIsObeyed() async throws {
        let adVector = "0201061aff4c0002154142434445464748494041424344454600010002f8"
        #expect(try await ProximaBinary.run(["decode", "--format", "ad", adVector]).status == 0)
        let forced = try await ProximaBinary.run(["decode", "--format", "hci", adVector])
        #expect(forced.status != 0)
        #expect(forced.standardError.contains("HCI event code at byte 0"))
    }

    @Test func otherFormatsArePrintedOnRequest() async throws {
        let eddystone = "0201060303aafe1516aafe00e700010203040506070809010203040506"
        #expect(try await ProximaBinary.run(["decode", eddystone]).status != 0)
        let outcome = try await ProximaBinary.run(["decode", "--all-formats", eddystone])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.hasPrefix("Eddystone-UID namespace 00010203040506070809 instance 010203040506"))
    }
}

@Suite("proxima uuid")
struct UUIDCommandTests {
    @Test func printsANewVersion4UUIDEachTime() async throws {
        let first = try await ProximaBinary.run(["uuid"]).standardOutput
        let second = try await ProximaBinary.run(["uuid"]).standardOutput
        let uuid = try #require(UUID(uuidString: first.trimmingCharacters(in: .newlines)))
        #expect(first != second)
        #expect(first == first.lowercased())
        #expect(uuid.uuid.6 >> 4 == 4)
    }
}
