import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program started by a test, with its output collected as it arrives, so a test can wait for
/// a line, send a signal, and wait for the exit, each with a generous limit that only guards
/// against hangs.
public final class ChildProcess: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var stdoutData = Data()
    private var stderrData = Data()

    /// The `proxima` executable built next to the test bundle.
    public static var proximaExecutable: URL {
        let beside = Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("proxima")
        if let beside, FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let fromArgument = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("proxima")
        if FileManager.default.isExecutableFile(atPath: fromArgument.path) { return fromArgument }
        return BTVirt.packageRoot.appendingPathComponent(".build/debug/proxima")
    }

    public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.append(data, toStdout: true)
        }
        errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.append(data, toStdout: false)
        }
        try ProcessLaunch.run(process)
    }

    public static func proxima(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(proximaExecutable, arguments, environment: environment)
    }

    deinit {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    private func append(_ data: Data, toStdout: Bool) {
        guard !data.isEmpty else { return }
        // Kept as bytes: a read may end inside a multi-byte character.
        lock.lock()
        if toStdout { stdoutData.append(data) } else { stderrData.append(data) }
        lock.unlock()
    }

    public var standardOutput: String { lock.lock(); defer { lock.unlock() }; return String(decoding: stdoutData, as: UTF8.self) }
    public var standardError: String { lock.lock(); defer { lock.unlock() }; return String(decoding: stderrData, as: UTF8.self) }
    public var outputLines: [String] { standardOutput.split(separator: "\n").map(String.init) }

    /// Waits until a line of standard output satisfies `predicate`; nil when the process ended
    /// or `timeout` passed first. The default only guards against a hang: on a loaded 2-core CI
    /// host a debug `proxima` once took more than 60 s to print its first line.
    public func waitForLine(timeout: Duration = .seconds(180), where predicate: (String) -> Bool) async throws -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if let line = outputLines.first(where: predicate) { return line }
            if !process.isRunning {
                try await Task.sleep(for: .milliseconds(50))
                return outputLines.first(where: predicate)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    public var isRunning: Bool { process.isRunning }

    /// For reading the child's own figures from /proc (memory, descriptors, threads).
    public var processIdentifier: Int32 { process.processIdentifier }

    public func signal(_ number: Int32) {
        if process.isRunning { Glibc.kill(process.processIdentifier, number) }
    }

    /// The exit status, or nil when the process is still running after `timeout` (it is then
    /// killed, so a hung child never outlives the test).
    public func waitForExit(timeout: Duration = .seconds(20)) async throws -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                Glibc.kill(process.processIdentifier, SIGKILL)
                // Not waitUntilExit: once a fresh-clone CI run saw Foundation miss a killed
                // child's end, and waitUntilExit then spun for ever on a cooperative thread.
                let killed = ContinuousClock.now
                while process.isRunning, killed.duration(to: .now) < .seconds(10) {
                    // Waits on the killed child process being reaped.
                    try await Task.sleep(for: .milliseconds(20))
                }
                return nil
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        // Let the pipe handlers deliver the last bytes.
        try await Task.sleep(for: .milliseconds(100))
        return process.terminationStatus
    }
}
