import DequeModule
import Synchronization

/// The database reads of event streams behind the ring (catch-up pages), shared: at most
/// `slots` run at once in the whole server, and tokens take turns. Sixty-four streams of one
/// token catching up half a million events then wait behind each other, not in front of
/// `/health`, ingestion or another token's stream, which each wait for at most `slots` pages.
///
/// A slot is also a budget of time: after a read that took `d`, the slot rests for
/// `d × (1 / share − 1)` before the next, so catching up uses at most `share` of the database
/// (and of the CPU that encodes what it read), however many streams wait.
final class CatchUpReads: Sendable {
    let slots: Int
    let share: Double
    private let clock: any Clock<Duration>
    private let state = Mutex(State())

    private struct State {
        var running = 0
        var waiting: [Int: Deque<CheckedContinuation<Void, Never>>] = [:]
        /// Tokens with a waiting read, in turn order.
        var turns: Deque<Int> = []
    }

    init(slots: Int, share: Double = 1, clock: any Clock<Duration> = ContinuousClock()) {
        self.slots = max(1, slots)
        self.share = min(1, max(0.01, share))
        self.clock = clock
    }

    /// Runs `read` in a slot, once it is the token's turn.
    func withSlot<T>(tokenID: Int, _ read: () async throws -> T) async throws -> T {
        await acquire(tokenID: tokenID)
        defer { release() }
        var result: Result<T, any Error>!
        let took = await clock.measure {
            do { result = .success(try await read()) } catch { result = .failure(error) }
        }
        if share < 1 { try? await clock.sleep(for: took * (1 / share - 1)) }
        return try result.get()
    }

    /// Reads waiting for a slot now (for tests and metrics).
    var waitingCount: Int { state.withLock { $0.waiting.values.reduce(0) { $0 + $1.count } } }

    private func acquire(tokenID: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                if state.running < slots && state.turns.isEmpty {
                    state.running += 1
                    return true
                }
                if state.waiting[tokenID] == nil { state.turns.append(tokenID) }
                state.waiting[tokenID, default: []].append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the slot to the next token in turn, or frees it.
    private func release() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard let token = state.turns.popFirst(), var queue = state.waiting.removeValue(forKey: token),
                  let first = queue.popFirst() else {
                state.running -= 1
                return nil
            }
            if !queue.isEmpty {
                state.waiting[token] = queue
                state.turns.append(token)
            }
            return first
        }
        next?.resume()
    }
}
