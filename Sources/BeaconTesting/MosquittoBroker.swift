import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway `mosquitto` broker for tests, on a free loopback port with a generated
/// configuration (anonymous clients allowed, optional persistence in its own folder). It can
/// be stopped and started again on the same port, to test reconnecting clients.
public final class MosquittoBroker: @unchecked Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let directory: URL
    private let executable: URL
    private let lock = NSLock()
    private var process: SpawnedProcess?

    /// The installed broker (Debian's `mosquitto` puts it in /usr/sbin).
    public static var executablePath: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin"]
        return folders.map { "\($0)/mosquitto" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Tests that need the broker run when it is installed, and always on CI, where a missing
    /// broker must fail the run rather than skip it.
    public static var shouldRun: Bool {
        executablePath != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// PEM files of the broker's TLS listener (`mqtts://`).
    public struct TLSFiles: Sendable {
        public var certificate: String
        public var key: String
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// Starts a broker; `persistence` keeps sessions and queued QoS 1 messages across a
    /// restart; `tls` makes its one listener TLS only.
    public init(persistence: Bool = false, tls: TLSFiles? = nil) throws {
        guard let path = Self.executablePath else {
            throw Unavailable(description: "mosquitto is not installed (Debian package mosquitto); run scripts/install-test-deps")
        }
        executable = URL(fileURLWithPath: path)
        port = try Self.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-mosquitto-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = """
            listener \(port) 127.0.0.1
            allow_anonymous true
            log_dest file \(directory.path)/mosquitto.log
            log_type all
            max_queued_messages 100000

            """
        if let tls {
            // mosquitto reads them after dropping root for its own user: copies it may read.
            for (name, source) in [("broker.pem", tls.certificate), ("broker.key", tls.key)] {
                let copy = directory.appendingPathComponent(name)
                try FileManager.default.copyItem(atPath: source, toPath: copy.path)
                _ = chmod(copy.path, 0o644)
            }
            configuration += "certfile \(directory.path)/broker.pem\nkeyfile \(directory.path)/broker.key\n"
        }
        if persistence {
            configuration += "persistence true\npersistence_location \(directory.path)/\n"
        }
        try configuration.write(to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        // mosquitto drops root privileges to its own user, which must be able to write here.
        if geteuid() == 0 { _ = chmod(directory.path, 0o777) }
        try start()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the broker and waits until it accepts connections.
    public func start() throws {
        let process = try SpawnedProcess([executable.path, "-c", directory.appendingPathComponent("mosquitto.conf").path])
        lock.withLock { self.process = process }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port: port) { return }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        kill()
        throw Unavailable(description: "mosquitto did not start on 127.0.0.1:\(port): \(log.suffix(600))")
    }

    /// SIGTERM: the broker saves its persistent state and exits (SIGKILL after 30 s).
    public func stop() throws {
        guard let process = lock.withLock({ self.process }) else { return }
        process.signal(SIGTERM)
        if process.waitForExit(timeout: 30) == nil {
            process.signal(SIGKILL)
            process.waitForExit(timeout: 10)
            lock.withLock { self.process = nil }
            throw Unavailable(description: "mosquitto did not stop within 30 s of SIGTERM: \(log.suffix(600))")
        }
        lock.withLock { self.process = nil }
    }

    /// SIGKILL, for tests of a broker that vanishes.
    public func kill() {
        guard let process = lock.withLock({ self.process }) else { return }
        process.signal(SIGKILL)
        process.waitForExit(timeout: 10)
        lock.withLock { self.process = nil }
    }

    public func restart() throws {
        try stop()
        try start()
    }

    public var log: String { (try? String(contentsOf: directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? "" }

    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Unavailable(description: "socket() failed: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw Unavailable(description: "cannot bind a loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
