import Foundation

/// A generated shell script run by `sh` with a stub `hcitool` first on PATH that records the
/// arguments of every call, so a test sees exactly which commands the script would run and with
/// which words, without a controller. The script runs in a fresh folder; a test names a file
/// in it as the target of an injected command and checks that the file was not created.
public struct HcitoolScriptRun: Sendable {
    /// `sh -n`'s verdict on the script: 0 when it parses.
    public var syntaxStatus: Int32
    public var exitStatus: Int32
    /// The arguments of each `hcitool` call, in order.
    public var hcitoolCalls: [[String]]
    /// The folder the script ran in (removed after the run).
    public var folder: URL
    /// Files present in the folder after the run, apart from the stub and its log.
    public var createdFiles: [String]

    /// The folder a run will use, so a hostile input can name a file in it before the run.
    public static func makeFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hcitool-script-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    public static func run(_ script: String, in folder: URL) throws -> HcitoolScriptRun {
        defer { try? FileManager.default.removeItem(at: folder) }
        let stubFolder = folder.appendingPathComponent(".stub")
        try FileManager.default.createDirectory(at: stubFolder, withIntermediateDirectories: true)
        let log = stubFolder.appendingPathComponent("calls")
        // Each argument ends with a unit separator (0x1F) and each call with a record separator
        // (0x1E), so arguments holding newlines or spaces are recorded whole.
        let stub = stubFolder.appendingPathComponent("hcitool")
        try Data("#!/bin/sh\nfor argument in \"$@\"; do printf '%s\\037' \"$argument\"; done >> \"$HCITOOL_LOG\"\nprintf '\\036' >> \"$HCITOOL_LOG\"\n".utf8)
            .write(to: stub)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub.path)
        let scriptFile = stubFolder.appendingPathComponent("script.sh")
        try Data(script.utf8).write(to: scriptFile)
        let environment = ["PATH": "\(stubFolder.path):/usr/bin:/bin", "HCITOOL_LOG": log.path]
        let syntax = try runShell(["-n", scriptFile.path], in: folder, environment: environment)
        let exit = try runShell([scriptFile.path], in: folder, environment: environment)
        let recorded = (try? Data(contentsOf: log)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let calls = recorded.split(separator: "\u{1E}").map { call in
            call.split(separator: "\u{1F}", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
        let created = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != ".stub" }.sorted()
        return HcitoolScriptRun(syntaxStatus: syntax, exitStatus: exit, hcitoolCalls: calls, folder: folder, createdFiles: created)
    }

    private static func runShell(_ arguments: [String], in folder: URL, environment: [String: String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        process.waitUntilExit()
        return process.terminationStatus
    }
}
