/// A first-in, first-out lock for async code: actors are reentrant, so an actor alone cannot keep
/// a transaction's statements together across `await`s on one shared SQLite connection.
actor AsyncMutex {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func lock() async {
        if !locked {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func unlock() {
        if waiters.isEmpty {
            locked = false
        } else {
            waiters.removeFirst().resume()
        }
    }

    /// Runs `body` holding the lock, and releases it however `body` ends. Runs on the caller's
    /// executor (`nonisolated`), so only the lock's bookkeeping is on this actor.
    nonisolated func withLock<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await lock()
        do {
            let result = try await body()
            await unlock()
            return result
        } catch {
            await unlock()
            throw error
        }
    }
}
