import BeaconServer
import Foundation
import Testing

/// Inputs found by `Fuzz/run.sh csv` (docs/reliability.md#fuzzing), kept as bytes.
@Suite struct CSVFuzzRegressionTests {
    static let organisation = Organisation(name: "Nerdery", proximityUUIDs: [UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!])

    /// A quoted address holding a Windows line break (CR LF) came back from the directory
    /// export unquoted, so importing the export split the row in two. "\r\n" is one Character
    /// in Swift, and the writer compared Characters with "\r" and "\n".
    @Test func lineBreakInsideAFieldSurvivesExport() throws {
        let bytes: [UInt8] = Array("uuid,major,site,address,minor,label\n".utf8)
            + Array("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,Bloomington Office,\"1 Main St".utf8)
            + [0x0D, 0x0A] + Array("Bloomington\",1001,Mordor\n".utf8)
        let directory = try Directory.parseCSV(String(decoding: bytes, as: UTF8.self), organisation: Self.organisation)
        #expect(directory.locations.first?.address == "1 Main St\r\nBloomington")
        let exported = directory.csv()
        #expect(try CSV.parse(exported).count == 2)
        #expect(try Directory.parseCSV(exported, organisation: Self.organisation) == directory)
    }

    /// Rows are grouped into locations by UUID and major in the order each first appears,
    /// however many there are and however they interleave (the lookup is by key now, not a scan).
    @Test func manyInterleavedMajorsGroupInFirstSeenOrder() throws {
        let majors = (1...3000).map { ($0 * 7919) % 65_000 + 1 }
        var text = "uuid,major,site,minor,label\n"
        for round in 0..<2 {
            for major in majors {
                text += "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,\(major),site \(major),\(1001 + round),beacon \(round)\n"
            }
        }
        let directory = try Directory.parseCSV(text, organisation: Self.organisation)
        #expect(directory.locations.map { Int($0.major) } == majors)
        #expect(directory.locations.allSatisfy { $0.minors.map(\.minor) == [1001, 1002] })
    }

    /// A plan width of 6.8e106 m (finite, so accepted) trapped the export: whole values were
    /// written through `Int(value)`, which traps beyond Int.max. A `GET /v1/directory` in CSV
    /// after such an import would have crashed the server. Found by the long csv run (27 Nov).
    @Test func aHugePlanSizeExportsAndReadsBack() throws {
        let width = String(repeating: "7", count: 106)
        let text = "uuid,major,site,address,plan_width,plan_height,minor,category,category_name,label,x,y\n"
            + "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,Bloomington Effice,\"1 Main St, Bloomington\",6\(width)0,40,1001,1,Conference Room,Mordor,12,8\n"
            + "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,2,Minneapolis,,0,0,1002,1,,Shire,-9.5e20,0\n"
        let directory = try Directory.parseCSV(text, organisation: Self.organisation)
        #expect(directory.locations.first?.planWidth == Double("6\(width)0"))
        let exported = directory.csv()
        #expect(exported.contains(",40,1001,"))
        #expect(try Directory.parseCSV(exported, organisation: Self.organisation) == directory)
    }

    /// The same for a quote followed by a combining mark (one Character): it must be doubled.
    @Test func quoteWithACombiningMarkSurvivesRendering() throws {
        let rows = [["say \"\u{301}hi", "a\r\nb", "plain"]]
        #expect(CSV.render(rows) == "\"say \"\"\u{301}hi\",\"a\r\nb\",plain\n")
        #expect(try CSV.parse(CSV.render(rows)) == rows)
    }
}
