import Foundation
import Testing

@Suite struct LocateCommandTests {
    func write(_ text: String, _ name: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("locate-\(UUID().uuidString)-\(name)")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Four beacons at the corners of a 10 m square, scans at known spots (n = 2, −59 dBm, 1 m
    /// height offset): the summary line counts every fix and trilateration is close.
    @Test func scansWithTruthGiveTheSummary() async throws {
        let beacons = try write("id,x,y,measured_power\na,0,0,-59\nb,10,0,-59\nc,10,10,-59\nd,0,10,-59\n", "beacons.csv")
        func rssi(_ x: Double, _ y: Double, _ bx: Double, _ by: Double) -> String {
            let squared: Double = (x - bx) * (x - bx) + (y - by) * (y - by) + 1
            let value: Double = -59 - 10 * log10(squared)
            return String(format: "%.1f", value)
        }
        var scans = "a,b,c,d,tx,ty\n"
        for (x, y) in [(2.0, 3.0), (5.0, 5.0), (8.0, 1.0)] {
            scans += [rssi(x, y, 0, 0), rssi(x, y, 10, 0), rssi(x, y, 10, 10), rssi(x, y, 0, 10), "\(x)", "\(y)"].joined(separator: ",") + "\n"
        }
        let scansPath = try write(scans, "scans.csv")
        let outcome = try await ProximaBinary.run(["locate", "--beacons", beacons, "--scans", scansPath, "--missing", "100",
                                             "--truth-x", "tx", "--truth-y", "ty", "--method", "trilateration"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let summary = try #require(outcome.standardOutput.split(separator: "\n").last)
        #expect(summary.hasPrefix("error: median 0.") && summary.hasSuffix("(3 fixes)"), "\(summary)")
        let json = try await ProximaBinary.run(["locate", "--beacons", beacons, "--scans", scansPath, "--missing", "100",
                                          "--truth-x", "tx", "--truth-y", "ty", "--method", "all", "--json"])
        #expect(json.standardOutput.split(separator: "\n").count == 4)
    }

    /// `--baseline` scores the strongest-four centroid on the scans `--min-beacons` keeps, and
    /// with `--gain unknown` a phone 11 dB hotter gets the same fixes.
    @Test func baselineMinimumBeaconsAndUnknownGain() async throws {
        let beacons = try write("id,x,y\na,0,0\nb,10,0\nc,10,10\nd,0,10\n", "beacons.csv")
        func scans(gain: Double) -> String {
            var text = "a,b,c,d,tx,ty\n"
            for (x, y) in [(2.0, 3.0), (5.0, 5.0), (8.0, 1.0)] {
                let values = [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)].map { bx, by -> String in
                    let squared: Double = (x - bx) * (x - bx) + (y - by) * (y - by) + 1
                    return String(format: "%.1f", -59 - 10 * log10(squared) + gain)
                }
                text += (values + ["\(x)", "\(y)"]).joined(separator: ",") + "\n"
            }
            // Two beacons heard: skipped with --min-beacons 3.
            return text + "-60,-70,100,100,1,1\n"
        }
        let plain = try write(scans(gain: 0), "plain.csv"), hot = try write(scans(gain: 11), "hot.csv")
        func run(_ path: String) async throws -> [Substring] {
            let outcome = try await ProximaBinary.run(["locate", "--beacons", beacons, "--scans", path, "--missing", "100", "--truth-x", "tx", "--truth-y", "ty",
                                                       "--min-beacons", "3", "--baseline", "--gain", "unknown", "--method", "trilateration"])
            #expect(outcome.status == 0, "\(outcome.standardError)")
            return outcome.standardOutput.split(separator: "\n")
        }
        let lines = try await run(plain)
        #expect(lines.first?.hasPrefix("baseline (4 strongest, 10^(RSSI/10)) error: median") == true && lines.first?.hasSuffix("(3 fixes)") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("error: median 0.") == true && lines.last?.hasSuffix("(3 fixes)") == true, "\(lines)")
        #expect(try await run(hot) == lines)
        let bad = try await ProximaBinary.run(["locate", "--beacons", beacons, "--scans", plain, "--gain", "sideways"])
        #expect(bad.status != 0 && bad.standardError.contains("--gain"), "\(bad.standardError)")
    }

    @Test func badScansNameLineAndColumn() async throws {
        let beacons = try write("id,x,y\na,0,0\nb,10,0\n", "beacons.csv")
        let scans = try write("a,b\n-60,-70\n-61,loud\n", "scans.csv")
        let outcome = try await ProximaBinary.run(["locate", "--beacons", beacons, "--scans", scans, "--missing", "-200"])
        #expect(outcome.status != 0)
        #expect(outcome.standardError.contains("\(scans):3:2: expected a number"), "\(outcome.standardError)")
    }

    @Test func routePassesTheDoor() async throws {
        let map = try write("""
        {"venue": {"width": 20, "height": 10, "walls": [{"from": {"x": 10, "y": 0}, "to": {"x": 10, "y": 4}}, {"from": {"x": 10, "y": 6}, "to": {"x": 10, "y": 10}}]},
         "rooms": [{"name": "west", "polygon": [{"x": 0, "y": 0}, {"x": 10, "y": 0}, {"x": 10, "y": 10}, {"x": 0, "y": 10}]},
                   {"name": "east", "polygon": [{"x": 10, "y": 0}, {"x": 20, "y": 0}, {"x": 20, "y": 10}, {"x": 10, "y": 10}]}],
         "doors": [{"name": "door", "position": {"x": 10, "y": 5}}]}
        """, "map.json")
        let outcome = try await ProximaBinary.run(["route", "--map", map, "--from", "2,2", "--to", "east"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.hasPrefix("route to east:") && outcome.standardOutput.contains("through door"))
        let bad = try await ProximaBinary.run(["route", "--map", map, "--from", "2,2", "--to", "attic"])
        #expect(bad.status != 0 && bad.standardError.contains("attic"))
    }

    /// A map that carries its own survey (n = 2.4 over four corner beacons, every 2 m):
    /// `--calibrate` fits it without `--survey`, and `--method fingerprint` has fingerprints.
    @Test func theMapsOwnSurveyCalibratesAndGivesFingerprints() async throws {
        let corners = [("a", 0.0, 0.0), ("b", 10.0, 0.0), ("c", 10.0, 10.0), ("d", 0.0, 10.0)]
        func rssi(_ x: Double, _ y: Double, _ bx: Double, _ by: Double) -> Double {
            -59 - 24 * log10(((x - bx) * (x - bx) + (y - by) * (y - by) + 1).squareRoot())
        }
        var survey: [String] = []
        for x in stride(from: 1.0, to: 10, by: 2) {
            for y in stride(from: 1.0, to: 10, by: 2) {
                let readings = corners.map { String(format: "\"%@\": %.2f", $0.0, rssi(x, y, $0.1, $0.2)) }.joined(separator: ", ")
                survey.append("{\"position\": {\"x\": \(x), \"y\": \(y)}, \"rssi\": {\(readings)}}")
            }
        }
        let beacons = corners.map { "{\"name\": \"\($0.0)\", \"position\": {\"x\": \($0.1), \"y\": \($0.2)}, \"measuredPower\": -59}" }
        let map = try write("{\"venue\": {\"width\": 10, \"height\": 10}, \"beacons\": [\(beacons.joined(separator: ", "))], \"survey\": [\(survey.joined(separator: ", "))]}",
                            "map.json")
        var scans = "a,b,c,d,tx,ty\n"
        for (x, y) in [(3.0, 3.0), (7.0, 5.0)] {
            scans += corners.map { String(format: "%.1f", rssi(x, y, $0.1, $0.2)) }.joined(separator: ",") + ",\(x),\(y)\n"
        }
        let scansPath = try write(scans, "scans.csv")
        let outcome = try await ProximaBinary.run(["locate", "--map", map, "--scans", scansPath, "--missing", "100", "--truth-x", "tx", "--truth-y", "ty",
                                                   "--method", "fingerprint", "--calibrate"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let lines = outcome.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("calibration: exponent 2.40") == true, "\(lines)")
        let summary = try #require(lines.last)
        #expect(summary.hasPrefix("error: median 0.") && summary.hasSuffix("(2 fixes)"), "the survey's spots are the scans' own: \(summary)")
    }
}
