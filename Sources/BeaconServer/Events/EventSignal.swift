import Foundation

/// Wakes event-stream readers when this instance stored new events. Readers also wake on a
/// timer and read the database, which is how events stored by another instance reach them.
public actor EventSignal {
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextID = 0

    public init() {}

    /// Returns at the next `notify()` or after `timeout`, whichever comes first.
    public func wait(timeout: Duration) async {
        let id = nextID
        nextID += 1
        await withCheckedContinuation { continuation in
            waiters[id] = continuation
            Task {
                try? await Task.sleep(for: timeout)
                self.resume(id)
            }
        }
    }

    private func resume(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume()
    }

    public func notify() {
        let pending = waiters
        waiters.removeAll()
        for continuation in pending.values { continuation.resume() }
    }
}
