import Foundation
import Hummingbird

/// Bounds the event streams (SSE and the event socket) open at once: so many per token, so
/// many in all. Each open stream holds a database reader that polls, a task and a connection,
/// so a client opening a thousand would otherwise take the server's memory and CPU from
/// everyone else (docs/reliability.md, "Overload and abuse").
final class EventStreamLimiter: @unchecked Sendable {
    let perToken: Int
    let total: Int
    private let lock = NSLock()
    private var openByToken: [Int: Int] = [:]
    private var openInAll = 0
    /// Tasks in `waitUntilOpen(atMost:)`, each resumed once no more than its count are open.
    private var closeWaiters: [(atMost: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(perToken: Int, total: Int) {
        self.perToken = perToken
        self.total = total
    }

    /// A lease on one stream, or a refusal: 429 naming `streams` when the token has its most
    /// open, 503 when the server has.
    func open(tokenID: Int) throws -> EventStreamLease {
        try lock.withLock {
            if let refusal = refusal(tokenID: tokenID) { throw refusal }
            openByToken[tokenID, default: 0] += 1
            openInAll += 1
        }
        return EventStreamLease(limiter: self, tokenID: tokenID)
    }

    /// Whether `open` would succeed now, without taking a stream (the event socket's gate asks
    /// before the upgrade, when the answer can still be an HTTP status).
    func check(tokenID: Int) throws {
        try lock.withLock {
            if let refusal = refusal(tokenID: tokenID) { throw refusal }
        }
    }

    var openStreams: Int { lock.withLock { openInAll } }

    /// Returns once at most `count` streams are open: a stream its client closed is given back
    /// when the server sees it gone, a moment no caller can time.
    func waitUntilOpen(atMost count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached: Bool = lock.withLock {
                guard openInAll > count else { return true }
                closeWaiters.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    fileprivate func close(tokenID: Int) {
        let reached: [CheckedContinuation<Void, Never>] = lock.withLock {
            openInAll -= 1
            let left = (openByToken[tokenID] ?? 1) - 1
            openByToken[tokenID] = left > 0 ? left : nil
            let reached = closeWaiters.filter { $0.atMost >= openInAll }.map(\.continuation)
            closeWaiters.removeAll { $0.atMost >= openInAll }
            return reached
        }
        for continuation in reached { continuation.resume() }
    }

    private func refusal(tokenID: Int) -> APIError? {
        if openByToken[tokenID, default: 0] >= perToken {
            var error = APIError(.tooManyRequests, field: "streams",
                                 "this token has \(perToken) event streams open, the most one token may (serve --max-streams-per-token); close one first")
            error.headers[.retryAfter] = "\(APIError.retryAfterSeconds)"
            return error
        }
        if openInAll >= total {
            var error = APIError(.serviceUnavailable, field: "streams",
                                 "the server has \(total) event streams open, the most it serves at once (serve --max-streams); retry later")
            error.headers[.retryAfter] = "\(APIError.retryAfterSeconds)"
            return error
        }
        return nil
    }
}

/// One open stream; it is given back when the lease goes, however the stream ended (finished,
/// client gone, server stopping, or its response never written).
final class EventStreamLease: Sendable {
    private let limiter: EventStreamLimiter
    private let tokenID: Int

    fileprivate init(limiter: EventStreamLimiter, tokenID: Int) {
        self.limiter = limiter
        self.tokenID = tokenID
    }

    deinit { limiter.close(tokenID: tokenID) }
}
