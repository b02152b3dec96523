import Foundation
import Testing

/// `proxima fleet` against a real `proxima serve --demo`: the table of its beacons, and a refused
/// token reported with the server's answer.
@Suite("proxima fleet")
struct FleetCommandTests {
    @Test func printsTheDemoShopsFleetTable() async throws {
        let directory = NSTemporaryDirectory() + "proxima-fleet-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(directory)/proxima.sqlite", instance: "fleet", extra: ["--demo"])
        defer { server.stop() }

        // The demo shopper's gateway posts within a second or two; the table lists every
        // registered beacon whether heard or not.
        var table = ""
        for _ in 0..<50 {
            let fleet = try ProximaProcess(["fleet", "--server", base.absoluteString, "--token", ProximaProcess.adminToken])
            #expect(try await fleet.waitForExit(timeout: .seconds(30)) == 0, "\(fleet.outputText)")
            table = fleet.outputText
            if table.contains("demo-shopper") { break }
            // Waits on the demo gateway inside the child `proxima serve --demo` posting its first batch.
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(table.hasPrefix("state    last heard   heard by"), "\(table)")
        for label in ["Front Door", "Electronics", "Shoes", "Groceries", "Till"] {
            #expect(table.contains("High Street Store – "), "\(table)")
            #expect(table.contains(label), "\(label) missing from \(table)")
        }
        #expect(table.contains("demo-shopper"), "no beacon heard by the demo gateway: \(table)")

        let refused = try ProximaProcess(["fleet", "--server", base.absoluteString, "--token", "px_wrong"])
        #expect(try await refused.waitForExit(timeout: .seconds(30)) != 0)
        #expect(refused.outputText.contains("401"), "\(refused.outputText)")
        #expect(refused.outputText.contains("Authorization"))

        let invalid = try ProximaProcess(["fleet", "--server", "not a url", "--token", "x"])
        #expect(try await invalid.waitForExit(timeout: .seconds(30)) == 64)
        #expect(invalid.outputText.contains("--server"), "\(invalid.outputText)")
    }
}
