import BeaconTesting
import Foundation
import Testing

/// `serve`, `gateway` and `advertise` options from a file and `PROXIMA_*` variables as well as
/// flags: flags win, then the environment, then the file.
@Suite struct ConfigurationLayersTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func write(_ text: String, name: String = "proxima.conf") throws -> String {
        let url = folder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// The `option = value  (source)` lines of `--show-config`, by option.
    func shown(_ outcome: ProximaBinary.Outcome) -> [String: String] {
        var lines: [String: String] = [:]
        for line in outcome.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { lines[String(parts[0])] = String(parts[1]) }
        }
        return lines
    }

    @Test func flagsWinOverEnvironmentWhichWinsOverTheFile() async throws {
        let path = try write("""
            # a comment
            [serve]
            port = 9001
            host = "0.0.0.0"   # every interface
            rate-limit = 50
            log-level = debug
            [gateway]
            server = http://127.0.0.1:9001
            """)
        let outcome = try await ProximaBinary.run(["serve", "--config-file", path, "--port", "9003", "--show-config"],
                                            environment: ["PROXIMA_PORT": "9002", "PROXIMA_RATE_LIMIT": "75"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let lines = shown(outcome)
        #expect(lines["port"] == "= 9003  (command line)")
        #expect(lines["rate-limit"] == "= 75  (environment PROXIMA_RATE_LIMIT)")
        #expect(lines["host"] == "= 0.0.0.0  (\(path):4)")
        #expect(lines["log-level"] == "= debug  (\(path):6)")
        #expect(lines["server"] == nil, "a [gateway] key must not reach serve")
    }

    @Test func theEnvironmentNamesTheFileAndSecretsAreMasked() async throws {
        let path = try write("""
            [gateway]
            server = http://127.0.0.1:1
            token = abcdefgh12345678
            receiver-token = shelf=one
            receiver-token = door=two
            """)
        let outcome = try await ProximaBinary.run(["gateway", "--show-config"], environment: ["PROXIMA_CONFIG_FILE": path])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let lines = shown(outcome)
        #expect(lines["token"] == "= ********  (\(path):3)")
        #expect(lines["receiver-token"] == "= ********, ********  (\(path):4)")
        #expect(!outcome.standardOutput.contains("abcdefgh"))
    }

    @Test func aFileValueReachesTheRunningServer() async throws {
        let database = folder.appendingPathComponent("from-file.sqlite")
        let path = try write("""
            [serve]
            database = sqlite:\(database.path)
            port = 0
            """)
        let server = try ChildProcess.proxima(["serve", "--config-file", path])
        let listening = try await server.waitForLine { $0.contains("listening on") }
        server.signal(SIGTERM)
        _ = try await server.waitForExit(timeout: .seconds(30))
        #expect(listening?.contains("(database sqlite:\(database.path))") == true, "serve did not start as the file says: \(listening ?? server.standardError)")
        #expect(FileManager.default.fileExists(atPath: database.path), "the database named in the file was not created")
    }

    @Test(arguments: [
        ("[serve]\nprot = 1\n", ":2: 'prot' is not an option of proxima serve"),
        ("port = 1\n", ":1: key 'port' comes before any [serve], [gateway] or [advertise] section"),
        ("[serve]\nport 8080\n", ":2: expected name = value"),
        ("[serve]\nhost = \"open\n", ":2: value of 'host' has no closing quote"),
        ("[serve]\nport = 1\nport = 2\n", ":3: 'port' is given twice in [serve] (first on line 2)"),
        ("[servr]\nport = 1\n", ":2: section [servr] is not one of [serve], [gateway], [advertise]"),
        ("[serve]\ndemo = maybe\n", "'demo' is a flag: true or false, found 'maybe'"),
    ])
    func aBadFileNamesTheKeyAndLine(text: String, expected: String) async throws {
        let path = try write(text)
        let outcome = try await ProximaBinary.run(["serve", "--config-file", path, "--show-config"])
        #expect(outcome.status == 64)
        #expect(outcome.standardError.contains(expected), "\(outcome.standardError)")
    }

    @Test func aBadValueFromTheEnvironmentSaysWhereItCameFrom() async throws {
        let fromEnvironment = try await ProximaBinary.run(["serve"], environment: ["PROXIMA_PORT": "not-a-port"])
        #expect(fromEnvironment.status != 0)
        #expect(fromEnvironment.standardError.contains("--port came from environment PROXIMA_PORT"), "\(fromEnvironment.standardError)")
        #expect(fromEnvironment.standardError.contains("'not-a-port'"))
    }

    @Test func aMissingFileIsAClearError() async throws {
        let outcome = try await ProximaBinary.run(["gateway", "--config-file", folder.appendingPathComponent("absent.conf").path, "--show-config"])
        #expect(outcome.status == 64)
        #expect(outcome.standardError.contains("absent.conf: cannot be read"), "\(outcome.standardError)")
    }

    @Test func otherCommandsAreNotLayered() async throws {
        let outcome = try await ProximaBinary.run(["uuid"], environment: ["PROXIMA_PORT": "not-a-port"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
    }
}

/// An options file alone in a temporary folder.
struct OptionsFile {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-config-\(UUID().uuidString)")
    var path: String { folder.appendingPathComponent("proxima.conf").path }

    init() throws { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// `serve --no-security-checks` (docs/security.md, "In the server") in the options file.
@Suite struct SecurityChecksOptionTests {
    @Test func noSecurityChecksComesFromTheOptionsFileAndABadValueIsRefused() async throws {
        let file = try OptionsFile()
        defer { file.remove() }
        let path = file.path
        try "[serve]\nno-security-checks = true\n".write(toFile: path, atomically: true, encoding: .utf8)
        let fromFile = try await ProximaBinary.run(["serve", "--config-file", path, "--show-config"])
        #expect(fromFile.status == 0, "\(fromFile.standardError)")
        #expect(fromFile.standardOutput.contains("no-security-checks = true  (\(path):2)"), "\(fromFile.standardOutput)")

        try "[serve]\nno-security-checks = maybe\n".write(toFile: path, atomically: true, encoding: .utf8)
        let refused = try await ProximaBinary.run(["serve", "--config-file", path, "--show-config"])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("'no-security-checks' is a flag: true or false, found 'maybe'"), "\(refused.standardError)")
    }
}

/// `serve --phone-room-particles` (docs/server.md, "Tracking"): from the options file, and a
/// value out of range refused with the option's name.
@Suite struct PhoneRoomParticlesOptionTests {
    @Test func phoneRoomParticlesComesFromTheOptionsFileAndOutOfRangeIsRefused() async throws {
        let file = try OptionsFile()
        defer { file.remove() }
        let path = file.path
        try "[serve]\nphone-room-particles = 300\n".write(toFile: path, atomically: true, encoding: .utf8)
        let fromFile = try await ProximaBinary.run(["serve", "--config-file", path, "--show-config"])
        #expect(fromFile.status == 0, "\(fromFile.standardError)")
        #expect(fromFile.standardOutput.contains("phone-room-particles = 300  (\(path):2)"), "\(fromFile.standardOutput)")

        for value in ["5001", "-1"] {
            // The bad log format only stops a server from starting should the check be lost
            // (validation reports the first refusal, and this one is checked first).
            let refused = try await ProximaBinary.run(["serve", "--config-file", path, "--phone-room-particles=\(value)", "--log-format", "none"])
            #expect(refused.status != 0)
            #expect(refused.standardError.contains("--phone-room-particles must be in 0…5000, got \(value)"), "\(refused.standardError)")
        }
    }
}
