import Foundation

/// A clock that moves only when a test calls `advance(by:)`, so that timeouts are tested
/// without waiting for them. Sleepers whose deadline is reached wake in deadline order.
public final class TestClock: Clock, @unchecked Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleepers: [Sleeper] = []
    private var nextID: UInt64 = 0
    /// Tasks in `waitForSleepers`, each resumed when that many sleep.
    private var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    public init() {}

    public var now: Instant { lock.withLock { current } }
    public var minimumResolution: Duration { .zero }

    /// How many tasks sleep on this clock now.
    public var sleeperCount: Int { lock.withLock { sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = lock.withLock {
            defer { nextID += 1 }
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resumeNow, waiters): (Bool, [CheckedContinuation<Void, Never>]) = lock.withLock {
                    guard deadline > current, !Task.isCancelled else { return (true, []) }
                    sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (false, takeSatisfiedWaiters())
                }
                if resumeNow { continuation.resume() }
                for waiter in waiters { waiter.resume() }
            }
        } onCancel: {
            let cancelled = lock.withLock { () -> Sleeper? in
                guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Moves the time on and wakes every sleeper whose deadline it reached.
    public func advance(by duration: Duration) {
        let due: [Sleeper] = lock.withLock {
            current = current.advanced(by: duration)
            let reached = sleepers.filter { $0.deadline <= current }.sorted { $0.deadline < $1.deadline }
            sleepers.removeAll { $0.deadline <= current }
            return reached
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (in real time, yielding) until `count` tasks sleep on this clock, so that a test
    /// advances the time only after the code under test has started its timer.
    /// Resumed by `sleep` itself, so it costs no polling.
    public func waitForSleepers(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached: Bool = lock.withLock {
                guard sleepers.count < count else { return true }
                sleeperWaiters.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    /// Removes the waiters that as many tasks as they wait for now sleep on; call under the lock.
    private func takeSatisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
        let satisfied = sleeperWaiters.filter { $0.count <= sleepers.count }.map(\.continuation)
        sleeperWaiters.removeAll { $0.count <= sleepers.count }
        return satisfied
    }
}
