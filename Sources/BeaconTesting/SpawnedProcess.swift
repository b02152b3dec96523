import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child started with posix_spawn, with its signals as a shell would give them: none blocked
/// and each at its default action. A child started by Foundation's `Process` from Swift's
/// cooperative threads inherits their mask (SIGHUP, SIGINT, SIGTERM, SIGUSR1 and SIGUSR2
/// blocked by libdispatch's workers on Linux), so a server that relies on plain signal handlers
/// (mosquitto) never sees the SIGTERM that should stop it. The child is reaped here with
/// waitpid, never by Foundation.
public final class SpawnedProcess: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let pid: pid_t
    public let arguments: [String]
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `arguments[0]` (a path) with the others; standard input is /dev/null, standard
    /// output and error go to `outputPath` (or /dev/null).
    public init(_ arguments: [String], outputPath: String? = nil) throws {
        precondition(!arguments.isEmpty, "a command needs its executable")
        self.arguments = arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, &cArguments, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
    }

    deinit {
        if isRunning {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(timeout: 10)
        }
    }

    /// Runs a command to its end and answers its output, or throws with the output when it
    /// fails or outlives `timeout` seconds (then it is killed).
    @discardableResult
    public static func run(_ arguments: [String], timeout: Double = 300) throws -> String {
        let outputPath = NSTemporaryDirectory() + "proxima-command-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let child = try SpawnedProcess(arguments, outputPath: outputPath)
        let status = child.waitForExit(timeout: timeout)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard let status else {
            child.signal(SIGKILL)
            _ = child.waitForExit(timeout: 10)
            throw Failure(description: "\(arguments.joined(separator: " ")) did not finish in \(timeout) s: \(text.suffix(1000))")
        }
        guard status == 0 else {
            throw Failure(description: "\(arguments.joined(separator: " ")) failed with status \(status): \(text.suffix(1000))")
        }
        return text
    }

    public var isRunning: Bool { reap() == nil }

    public func signal(_ number: Int32) {
        if isRunning { Glibc.kill(pid, number) }
    }

    /// The exit status (128 + the signal for a child a signal ended), or nil if it is still
    /// running after `timeout` seconds.
    @discardableResult
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = reap() { return status }
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    private func reap() -> Int32? {
        lock.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, WNOHANG) } while result == -1 && errno == EINTR
            if result == -1 {
                // Someone else reaped it (ECHILD): it has ended, with a status nobody kept.
                exitStatus = -1
                return exitStatus
            }
            guard result == pid else { return nil }
            // WIFEXITED, WEXITSTATUS and WTERMSIG, spelled out since the C macros are not imported.
            let signalled = status & 0x7F
            exitStatus = signalled == 0 ? (status >> 8) & 0xFF : 128 + signalled
            return exitStatus
        }
    }
}
