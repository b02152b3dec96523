import BeaconTesting
import Foundation
import Testing

/// Runs the built `proxima` executable, which SwiftPM puts in the same products directory as
/// the test bundle.
struct ProximaBinary {
    struct Outcome {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    static let url: URL? = {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [URL] = []
        if let explicit = environment["PROXIMA_BINARY"] { candidates.append(URL(fileURLWithPath: explicit)) }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent("proxima"))
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("proxima"))
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("proxima"))
        for bundle in Bundle.allBundles {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("proxima"))
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs proxima with standard output on `path` (such as /dev/full) and standard error in a
    /// pipe; the outcome's standard output is empty. `signalled` tells a crash from an exit.
    static func run(_ arguments: [String], standardOutputPath path: String,
                    environment: [String: String] = [:]) async throws -> (outcome: Outcome, signalled: Bool) {
        let executable = try #require(url, "the proxima executable was not built next to the tests (swift build --build-tests)")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = try #require(FileHandle(forWritingAtPath: path), "cannot open \(path)")
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        let finished = try await FinishedProcess.run(process, output: nil, errors: error) { try output.close() }
        return (Outcome(status: finished.status, standardOutput: "",
                        standardError: String(decoding: finished.standardError, as: UTF8.self)),
                finished.signalled)
    }

    /// Runs proxima to its exit, off the cooperative threads (`FinishedProcess`).
    static func run(_ arguments: [String], input: String? = nil, currentDirectory: URL? = nil,
                    environment: [String: String] = [:]) async throws -> Outcome {
        let executable = try #require(url, "the proxima executable was not built next to the tests (swift build --build-tests)")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe(), error = Pipe(), standardInput = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = standardInput
        let finished = try await FinishedProcess.run(process, output: output, errors: error,
                                                     input: Data((input ?? "").utf8), inputPipe: standardInput)
        return Outcome(status: finished.status,
                       standardOutput: String(decoding: finished.standardOutput, as: UTF8.self),
                       standardError: String(decoding: finished.standardError, as: UTF8.self))
    }
}
