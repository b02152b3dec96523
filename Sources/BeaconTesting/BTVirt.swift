import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// BlueZ's controller emulator, started by `scripts/btvirt-harness` in a private directory and
/// stopped by `stop()` (or when the value is released).
///
/// Every connection to `leSocketPath` is a fresh LE controller; all share one emulated air.
/// The emulator sends one report per advertiser when advertising or scanning is enabled, with
/// RSSI 127 ("not available"); it does not repeat at the advertising interval.
public final class BTVirt: @unchecked Sendable {
    public let directory: URL
    public var leSocketPath: String { directory.appendingPathComponent("bt-server-le").path }
    private let process: Process
    private let log: URL

    /// True when CI=true: emulator tests must fail, not skip, when the emulator cannot start.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Whether emulator tests should run: always on CI (so a missing emulator fails them),
    /// elsewhere when btvirt and gcc are installed or can be installed (running as root).
    public static var shouldRunTests: Bool {
        isCI || (commandExists("gcc") && (commandExists("btvirt") || getuid() == 0))
    }

    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Starts the emulator and waits until its LE socket accepts connections.
    public static func start(timeout: Duration = .seconds(300)) throws -> BTVirt {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("proxima-btvirt-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("btvirt.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [packageRoot.appendingPathComponent("scripts/btvirt-harness").path, "run", directory.path]
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardOutput = logHandle
        process.standardError = logHandle
        process.standardInput = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        let emulator = BTVirt(directory: directory, process: process, log: log)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if isListening(emulator.leSocketPath) { return emulator }
            if !process.isRunning { break }
            usleep(20_000)
        }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        emulator.stop()
        throw BTVirtError(message: "btvirt did not start (socket \(emulator.leSocketPath) never appeared); log:\n\(output)")
    }

    /// The socket file appears at bind(), before listen(): a connection in between is refused.
    /// The kernel marks a listening unix socket with the __SO_ACCEPTCON flag (0x10000) in
    /// /proc/net/unix; checking that avoids creating a throwaway emulated controller.
    static func isListening(_ path: String) -> Bool {
        guard FileManager.default.fileExists(atPath: path), let table = readProcFile("/proc/net/unix") else { return false }
        for line in table.split(separator: "\n") where line.hasSuffix(" " + path) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count > 3, let flags = UInt32(fields[3], radix: 16), flags & 0x10000 != 0 { return true }
        }
        return false
    }

    /// Reads a /proc file to its end. Foundation trusts the size stat reports, which is 0 for
    /// /proc files, and stops after the first page; a busy machine's socket table is longer.
    static func readProcFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private init(directory: URL, process: Process, log: URL) {
        self.directory = directory
        self.process = process
        self.log = log
    }

    deinit { stop() }

    public var isRunning: Bool { process.isRunning }

    /// Kills the emulator at once (SIGKILL), as a crash would.
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Stops the emulator and removes its directory.
    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    static func commandExists(_ name: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }
}

public struct BTVirtError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
