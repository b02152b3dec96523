import Foundation

/// Runs blocking work (waiting for a child process, reading its pipes to the end) on a thread of
/// its own and suspends the caller until it is done.
///
/// Swift's cooperative pool has one thread per core, two on CI. A test that blocks one of them
/// for the length of a child's run leaves every other test in the process, hundreds of them in
/// parallel, one thread, and two such tests leave them none: their deadlines then pass while
/// they cannot run (pass 1 lost a server's start for 300 s this way).
public enum OffCooperativeThread {
    public static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    public static func run<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }
}

/// A child process's exit and its whole output.
public struct FinishedProcess: Sendable {
    public var status: Int32
    public var signalled: Bool
    public var standardOutput: Data
    public var standardError: Data

    /// Starts `process` (its pipes already set), writes `input` to `inputPipe` and closes it,
    /// reads `output` and `errors` to the end, each on its own thread so that a child filling
    /// one pipe never waits on the other, and waits for the exit; none of it on a cooperative
    /// thread.
    /// `afterStart` runs once the child runs, e.g. to close the parent's copy of a file handle.
    public static func run(_ process: Process, output: Pipe?, errors: Pipe?, input: Data? = nil,
                           inputPipe: Pipe? = nil, afterStart: () throws -> Void = {}) async throws -> FinishedProcess {
        try ProcessLaunch.run(process)
        try afterStart()
        async let outputData = readToEnd(output)
        async let errorData = readToEnd(errors)
        if let inputPipe {
            let writer = inputPipe.fileHandleForWriting
            try await OffCooperativeThread.run {
                if let input { writer.write(input) }
                try writer.close()
            }
        }
        let (standardOutput, standardError) = await (outputData, errorData)
        await OffCooperativeThread.run { process.waitUntilExit() }
        return FinishedProcess(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
                               standardOutput: standardOutput, standardError: standardError)
    }

    private static func readToEnd(_ pipe: Pipe?) async -> Data {
        guard let pipe else { return Data() }
        let handle = pipe.fileHandleForReading
        return await OffCooperativeThread.run { handle.readDataToEndOfFile() }
    }
}
