import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server for tests: `initdb` into a temporary folder (as the `postgres`
/// user when running as root, since PostgreSQL refuses to run as root), then `pg_ctl start` on a
/// free loopback port. Stopped and removed when the test process exits.
public final class PostgresServer: Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let directory: String
    let binaries: String
    let runAsPostgres: Bool
    /// Whether a commit is acknowledged only once its WAL is written (`synchronous_commit`).
    let durableCommits: Bool

    /// The PostgreSQL binary folder (newest version under /usr/lib/postgresql), if installed.
    public static var binaryDirectory: String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: "\(bin)/pg_ctl") { return bin }
        }
        return nil
    }

    /// Tests that need PostgreSQL run when it is installed, and always on CI, where a missing
    /// server must fail the run rather than skip it.
    public static var shouldRun: Bool {
        binaryDirectory != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    private static let startLock = NSLock()
    nonisolated(unsafe) private static var started: Result<PostgresServer, Unavailable>?

    /// The one server of this test process, started on first use.
    public static func shared() throws(Unavailable) -> PostgresServer {
        startLock.lock()
        defer { startLock.unlock() }
        if let started { return try started.get() }
        let result: Result<PostgresServer, Unavailable>
        do {
            result = .success(try PostgresServer())
        } catch {
            result = .failure(error)
        }
        started = result
        if case .success(let server) = result {
            stopAtExit = (server.binaries, server.directory, server.runAsPostgres)
            atexit { PostgresServer.stopRegisteredServer() }
        }
        return try result.get()
    }

    /// A server of the caller's own, for a test that stops and starts it: the shared one serves
    /// suites running beside it. The caller removes it with `remove()`. Its commits are durable
    /// across `stopImmediately()`, as a real server's are: with `synchronous_commit=off` the last
    /// commits before the crash (a gateway just registered) were lost whenever no later write
    /// happened to flush the WAL, and the test saw 401 for a token it had been given.
    public static func dedicated() throws(Unavailable) -> PostgresServer {
        try PostgresServer(durableCommits: true)
    }

    public func remove() {
        try? stopImmediately()
        try? FileManager.default.removeItem(atPath: directory)
    }

    nonisolated(unsafe) private static var stopAtExit: (String, String, Bool)?

    private static func stopRegisteredServer() {
        guard let (binaries, directory, asPostgres) = stopAtExit else { return }
        _ = try? run("\(binaries)/pg_ctl", ["-D", "\(directory)/data", "-m", "immediate", "-w", "stop"], asPostgres: asPostgres)
        try? FileManager.default.removeItem(atPath: directory)
    }

    private init(durableCommits: Bool = false) throws(Unavailable) {
        guard let binaries = Self.binaryDirectory else {
            throw Unavailable(description: "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl); run scripts/install-test-deps")
        }
        self.binaries = binaries
        self.durableCommits = durableCommits
        runAsPostgres = geteuid() == 0
        let directory = NSTemporaryDirectory() + "proxima-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        self.directory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            if runAsPostgres {
                _ = try Self.run("/bin/chown", ["postgres:postgres", directory], asPostgres: false)
            }
            _ = try Self.run("\(binaries)/initdb", ["-D", "\(directory)/data", "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"], asPostgres: runAsPostgres)
        } catch {
            throw Unavailable(description: "initdb failed: \(error)")
        }
        var lastError = ""
        for _ in 0..<5 {
            let port = Self.freePort()
            do {
                _ = try Self.run("\(binaries)/pg_ctl", [
                    "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "30",
                    "-o", Self.serverOptions(port: port, directory: directory, durableCommits: durableCommits),
                    "start",
                ], asPostgres: runAsPostgres)
                self.port = port
                return
            } catch {
                lastError = "\(error)"
            }
        }
        let log = (try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? ""
        throw Unavailable(description: "pg_ctl start failed: \(lastError)\n\(log.suffix(2000))")
    }

    /// Creates an empty database and returns its URL for `--database`.
    public func createDatabase(prefix: String = "test") throws -> String {
        let name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        _ = try Self.run("\(binaries)/createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", name], asPostgres: false)
        return url(database: name)
    }

    public func url(database: String) -> String { "postgres://postgres@127.0.0.1:\(port)/\(database)" }

    struct CommandFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs a command to its end with posix_spawn and waitpid (`SpawnedProcess`). Foundation's
    /// `Process` is not used: it notices the end of a child through a descriptor the child
    /// inherits, and the server `pg_ctl start` leaves running keeps that descriptor open for ever.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], asPostgres: Bool) throws -> String {
        let argv = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments
        do {
            return try SpawnedProcess.run(argv)
        } catch let failure as SpawnedProcess.Failure {
            throw CommandFailed(description: failure.description)
        }
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`: no checkpoint, clients cut
    /// off); `start()` brings it back on the same port, recovering from its WAL. Both belong to
    /// tests that own this server for the time of the outage.
    public func stopImmediately() throws {
        try Self.run("\(binaries)/pg_ctl", ["-D", "\(directory)/data", "-m", "immediate", "-w", "-t", "30", "stop"], asPostgres: runAsPostgres)
    }

    public func start() throws {
        try Self.run("\(binaries)/pg_ctl", [
            "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "60",
            "-o", Self.serverOptions(port: port, directory: directory, durableCommits: durableCommits),
            "start",
        ], asPostgres: runAsPostgres)
    }

    /// Speed over durability (no fsync, no full pages): a test's data outlives no machine crash.
    /// Only a process crash is simulated, which the page cache survives, so fsync stays off even
    /// for durable commits.
    private static func serverOptions(port: Int, directory: String, durableCommits: Bool) -> String {
        "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=\(durableCommits ? "on" : "off") "
            + "-c full_page_writes=off -c max_connections=200"
    }

    /// A port the kernel just handed out on loopback (released before PostgreSQL binds it).
    public static func freePort() -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : Int.random(in: 20000...60000)
    }
}
