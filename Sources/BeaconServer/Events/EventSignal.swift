import Foundation

/// Wakes event-stream readers when this instance stored new events. Readers also wake on a
/// timer and read the database, which is how events stored by another instance reach them.
public actor EventSignal {
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextID = 0
    private let clock: any Clock<Duration>

    public init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
    }

    /// Returns at the next `notify()` or after `timeout`, whichever comes first. The timer is
    /// cancelled when the wait ends, so no sleeping task outlives it.
    public func wait(timeout: Duration) async {
        let id = nextID
        nextID += 1
        let clock = self.clock
        let timer = Task {
            do { try await clock.sleep(for: timeout) } catch { return }
            self.resume(id)
        }
        // The timer's resume needs this actor, which is not free before the waiter is registered.
        await withCheckedContinuation { waiters[id] = $0 }
        timer.cancel()
    }

    /// Readers waiting now (for tests).
    public var waiting: Int { waiters.count }

    private func resume(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume()
    }

    public func notify() {
        let pending = waiters
        waiters.removeAll()
        for continuation in pending.values { continuation.resume() }
    }
}
