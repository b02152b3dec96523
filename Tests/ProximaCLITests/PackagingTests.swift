import BeaconTesting
import Foundation
import Testing

/// The Raspberry Pi packaging: systemd units that systemd accepts, a .deb that installs and
/// runs, shell completions that load. The tools come from scripts/install-test-deps; when one
/// is missing the test fails (it does not skip).
@Suite(.serialized) struct PackagingTests {
    static let root = BTVirt.packageRoot
    static let units = ["proxima-serve.service", "proxima-gateway.service", "proxima-advertise.service"]

    struct Run {
        var status: Int32
        var output: String
    }

    /// Runs a program with output and errors together.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    directory: URL? = nil) async throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let finished = try await FinishedProcess.run(process, output: pipe, errors: nil)
        return Run(status: finished.status, output: String(decoding: finished.standardOutput, as: UTF8.self))
    }

    static func tool(_ name: String) throws -> String {
        for folder in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        Issue.record("\(name) is not installed (scripts/install-test-deps installs it)")
        throw CancellationError()
    }

    static func temporaryFolder(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func unitText(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent("packaging/systemd/\(name)"), encoding: .utf8)
    }

    @Test func systemdAcceptsTheUnits() async throws {
        let analyze = try Self.tool("systemd-analyze")
        let binary = try #require(ProximaBinary.url, "proxima was not built")
        let folder = try Self.temporaryFolder("units")
        // The units name /usr/bin/proxima and man:proxima(1); point both at this build.
        let manual = folder.appendingPathComponent("man/man1")
        try FileManager.default.createDirectory(at: manual, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.root.appendingPathComponent("packaging/man/proxima.1"),
                                         to: manual.appendingPathComponent("proxima.1"))
        var paths: [String] = []
        for unit in Self.units {
            let text = try Self.unitText(unit).replacingOccurrences(of: "/usr/bin/proxima", with: binary.path)
            let path = folder.appendingPathComponent(unit).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        let verified = try await Self.run(analyze, ["verify"] + paths, environment: ["MANPATH": folder.appendingPathComponent("man").path])
        #expect(verified.status == 0, "systemd-analyze verify: \(verified.output)")
        #expect(verified.output.isEmpty, "systemd-analyze verify printed: \(verified.output)")

        for path in paths {
            let security = try await Self.run(analyze, ["security", "--offline=true", "--no-pager", path])
            let level = security.output.split(separator: "\n").last { $0.contains("Overall exposure level") }
            let score = level.flatMap { line in line.split(separator: " ").compactMap { Double($0) }.first }
            // systemd rates exposure from 0 to 10; these units score 1.9–2.7 ("OK"). A unit that
            // lost its sandboxing would score 7 or more.
            #expect(score.map { $0 < 4.0 } == true, "\(path): \(level.map(String.init) ?? security.output)")
        }
    }

    @Test(arguments: units)
    func theUnitsAreHardened(unit: String) throws {
        let text = try Self.unitText(unit)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for setting in ["User=proxima", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes",
                        "PrivateTmp=yes", "Restart=on-failure", "StateDirectory=proxima"] {
            #expect(lines.contains(setting), "\(unit) lacks \(setting)")
        }
        let expected = unit == "proxima-serve.service" ? "CapabilityBoundingSet=" : "CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN"
        #expect(lines.contains(expected), "\(unit): capabilities should be exactly \(expected)")
        #expect(text.contains("--config-file /etc/proxima/proxima.conf"))
    }

    @Test func theDebianPackageInstallsAndRuns() async throws {
        let binary = try #require(ProximaBinary.url, "proxima was not built")
        let lintian = try Self.tool("lintian")
        let dpkgDeb = try Self.tool("dpkg-deb")
        let folder = try Self.temporaryFolder("deb")
        let built = try await Self.run(Self.root.appendingPathComponent("scripts/package-deb").path,
                                 ["--binary", binary.path, "--output", folder.path], directory: Self.root)
        #expect(built.status == 0, "package-deb: \(built.output)")
        let package = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".deb") },
                                   "no .deb in \(folder.path): \(built.output)")
        let debPath = folder.appendingPathComponent(package).path

        let info = try await Self.run(dpkgDeb, ["--info", debPath])
        #expect(info.status == 0)
        #expect(info.output.contains("Package: proxima"))
        #expect(info.output.contains("Depends:") && info.output.contains("libc6"), "\(info.output)")
        #expect(info.output.contains("postinst"))

        let contents = try await Self.run(dpkgDeb, ["--contents", debPath])
        for path in ["./usr/bin/proxima", "./lib/systemd/system/proxima-gateway.service", "./etc/proxima/proxima.conf",
                     "./usr/share/man/man1/proxima.1.gz", "./usr/share/bash-completion/completions/proxima",
                     "./usr/share/doc/proxima/copyright"] {
            #expect(contents.output.contains(path), "the package lacks \(path)")
        }

        let checked = try await Self.run(lintian, ["--fail-on", "error", "--no-tag-display-limit", debPath])
        #expect(checked.status == 0, "lintian: \(checked.output)")
        #expect(!checked.output.split(separator: "\n").contains { $0.hasPrefix("E: ") }, "lintian: \(checked.output)")

        let installRoot = folder.appendingPathComponent("root")
        let extracted = try await Self.run(dpkgDeb, ["-x", debPath, installRoot.path])
        #expect(extracted.status == 0, "\(extracted.output)")
        let help = try await Self.run(installRoot.appendingPathComponent("usr/bin/proxima").path, ["--help"])
        #expect(help.status == 0, "\(help.output)")
        #expect(help.output.contains("USAGE: proxima"))
        // The example options file is one the packaged binary accepts.
        let shown = try await Self.run(installRoot.appendingPathComponent("usr/bin/proxima").path,
                                 ["serve", "--config-file", installRoot.appendingPathComponent("etc/proxima/proxima.conf").path, "--show-config"])
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.output.contains("database = sqlite:/var/lib/proxima/proxima.sqlite"))
    }

    @Test func bashLoadsTheCompletionsAndCompletesCommandsAndOptions() async throws {
        let binary = try #require(ProximaBinary.url, "proxima was not built")
        let bash = try Self.tool("bash")
        let script = """
            source <(proxima --generate-completion-script bash) || exit 3
            complete -p proxima || exit 4
            COMP_WORDS=(proxima ser); COMP_CWORD=1; COMP_LINE="proxima ser"; COMP_POINT=${#COMP_LINE}
            _proxima proxima ser proxima
            echo "commands: ${COMPREPLY[*]}"
            COMP_WORDS=(proxima gateway --rec); COMP_CWORD=2; COMP_LINE="proxima gateway --rec"; COMP_POINT=${#COMP_LINE}
            _proxima proxima --rec gateway
            echo "options: ${COMPREPLY[*]}"
            """
        let path = binary.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let outcome = try await Self.run(bash, ["-c", script], environment: ["PATH": path])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.output.contains("complete -o filenames -F _proxima proxima"), "\(outcome.output)")
        let lines = outcome.output.split(separator: "\n")
        let commands = lines.first { $0.hasPrefix("commands:") }.map { $0.split(separator: " ").map(String.init) } ?? []
        #expect(commands.contains("serve"), "\(outcome.output)")
        let options = lines.first { $0.hasPrefix("options:") }.map { $0.split(separator: " ").map(String.init) } ?? []
        #expect(options.contains("--receiver-token"), "\(outcome.output)")
    }

    @Test(arguments: [("zsh", "#compdef proxima"), ("fish", "complete -c 'proxima'")])
    func zshAndFishScriptsAreGenerated(shell: String, marker: String) async throws {
        let outcome = try await ProximaBinary.run(["--generate-completion-script", shell])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.contains(marker), "\(outcome.standardOutput.prefix(200))")
        #expect(outcome.standardOutput.contains("gateway"))
    }
}
