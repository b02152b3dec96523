import Foundation

/// Starts child processes one at a time. A fresh-clone CI run crashed inside Foundation's
/// `Process.run()` (a bad pointer in its memcpy) while the test runner launched many children at
/// once; serialising the launches, which take milliseconds, removes that concurrency.
public enum ProcessLaunch {
    private static let lock = NSLock()

    public static func run(_ process: Process) throws {
        try lock.withLock { try process.run() }
    }
}
