import AsyncHTTPClient
import BeaconGateway
import BeaconTesting
import Foundation
import NIOCore
import NIOFoundationCompat
import Testing

/// A `proxima serve` (or `proxima gateway`) process started from the built executable, as a
/// user would run it.
final class ProximaProcess: @unchecked Sendable {
    static let adminToken = "px_end-to-end-admin-token-0123456789"

    static let binary: URL? = {
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["PROXIMA_BINARY"] { candidates.append(URL(fileURLWithPath: explicit)) }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent("proxima"))
        for bundle in Bundle.allBundles {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("proxima"))
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    let process = Process()
    private let output = Pipe()
    private let lock = NSLock()
    private var text = ""

    init(_ arguments: [String], executable: URL? = nil) throws {
        let binary = try #require(executable ?? Self.binary, "the proxima executable was not built next to the tests (swift build --build-tests)")
        process.executableURL = binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PROXIMA_ADMIN_TOKEN"] = Self.adminToken
        process.environment = environment
        process.standardOutput = output
        process.standardError = output
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.text += String(decoding: data, as: UTF8.self)
            self.lock.unlock()
        }
        try ProcessLaunch.run(process)
    }

    var outputText: String {
        lock.lock()
        defer { lock.unlock() }
        return text
    }

    /// Starts `proxima serve` on a free port and waits until it listens.
    static func serve(database: String, instance: String, extra: [String] = []) async throws -> (ProximaProcess, URL) {
        let server = try ProximaProcess(["serve", "--database", database, "--port", "0", "--instance", instance, "--log-level", "warning"] + extra)
        for _ in 0..<600 {
            if let range = server.outputText.range(of: #"listening on (https?://[0-9.]+:[0-9]+)"#, options: .regularExpression) {
                let line = String(server.outputText[range])
                return (server, URL(string: String(line.dropFirst("listening on ".count)))!)
            }
            if !server.process.isRunning {
                Issue.record("proxima serve exited: \(server.outputText)")
                throw CancellationError()
            }
            // Waits on the child `proxima serve` announcing its address.
            try await Task.sleep(for: .milliseconds(100))
        }
        server.stop()
        Issue.record("proxima serve did not start: \(server.outputText)")
        throw CancellationError()
    }

    /// SIGTERM, the graceful way, then wait.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
    }

    func waitForExit(timeout: Duration) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                Issue.record("process did not finish in time: \(outputText.suffix(2000))")
                break
            }
            // Waits on the child process exiting.
            try await Task.sleep(for: .milliseconds(50))
        }
        process.waitUntilExit()
        drainOutput()
        return process.terminationStatus
    }

    /// The readability handler delivers output asynchronously, so right after an exit its last
    /// bytes may not be in `outputText` yet: read what is left before anyone looks.
    private func drainOutput() {
        output.fileHandleForReading.readabilityHandler = nil
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        guard !rest.isEmpty else { return }
        lock.lock()
        text += String(decoding: rest, as: UTF8.self)
        lock.unlock()
    }
}

/// The JSON client tests use to talk to a real server.
typealias APIClient = ServerJSONClient

struct Empty: Codable {}
