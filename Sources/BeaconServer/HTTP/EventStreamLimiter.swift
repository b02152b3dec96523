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
    /// Each open stream's end, by token, so a revoked token's streams can be told to end.
    private var endsByToken: [Int: [ObjectIdentifier: StreamEnd]] = [:]
    /// Tasks in `waitUntilOpen(atMost:)`, each resumed once no more than its count are open.
    private var closeWaiters: [(atMost: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// Tasks in `waitUntilOpen(atLeast:)`, each resumed once that many are open.
    private var openWaiters: [(atLeast: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(perToken: Int, total: Int) {
        self.perToken = perToken
        self.total = total
    }

    /// A lease on one stream, or a refusal: 429 naming `streams` when the token has its most
    /// open, 503 when the server has. The stream ends when the token expires (`expiresAt`) or is
    /// revoked (``end(tokenID:reason:)``).
    func open(tokenID: Int, gatewayID: String? = nil, expiresAt: Double? = nil) throws -> EventStreamLease {
        let end = StreamEnd(gatewayID: gatewayID, expiresAt: expiresAt)
        let reached: [CheckedContinuation<Void, Never>] = try lock.withLock {
            if let refusal = refusal(tokenID: tokenID) { throw refusal }
            openByToken[tokenID, default: 0] += 1
            openInAll += 1
            endsByToken[tokenID, default: [:]][ObjectIdentifier(end)] = end
            let reached = openWaiters.filter { $0.atLeast <= openInAll }.map(\.continuation)
            openWaiters.removeAll { $0.atLeast <= openInAll }
            return reached
        }
        for continuation in reached { continuation.resume() }
        return EventStreamLease(limiter: self, tokenID: tokenID, end: end)
    }

    /// Tells every open stream of a token to end; returns the streams told.
    @discardableResult
    func end(tokenID: Int, reason: String, at now: Double) -> [StreamEnd] {
        let ends = lock.withLock { endsByToken[tokenID].map { Array($0.values) } ?? [] }
        return ends.filter { $0.end(reason, at: now) }
    }

    /// Tells every open stream of a gateway's or device's tokens to end.
    func end(gatewayID: String, reason: String, at now: Double) -> [StreamEnd] {
        let ends = allEnds
        return ends.filter { $0.gatewayID == gatewayID && $0.end(reason, at: now) }
    }

    /// Tells every open stream whose token has expired by `now` to end.
    func endExpired(now: Double) -> [StreamEnd] {
        allEnds.filter { end in end.expiresAt.map { now >= $0 } == true && end.end(StreamEnd.expired, at: now) }
    }

    /// Ends every stream whose client has not taken a write for `timeout` seconds by `now`.
    func endSlowReaders(now: Double, timeout: Double) -> [StreamEnd] {
        allEnds.filter { $0.isStuckWriting(now: now, timeout: timeout) && $0.end(StreamEnd.slowReader, at: now) }
    }

    /// Every open stream's end.
    var allEnds: [StreamEnd] { lock.withLock { endsByToken.values.flatMap(\.values) } }

    /// The tokens with a stream open now.
    var tokensWithStreams: [Int] { lock.withLock { Array(endsByToken.keys) } }

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

    /// Returns once at least `count` streams are open (a test's clients have been admitted).
    func waitUntilOpen(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached: Bool = lock.withLock {
                guard openInAll < count else { return true }
                openWaiters.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    fileprivate func close(tokenID: Int, end: StreamEnd) {
        let reached: [CheckedContinuation<Void, Never>] = lock.withLock {
            openInAll -= 1
            let left = (openByToken[tokenID] ?? 1) - 1
            openByToken[tokenID] = left > 0 ? left : nil
            endsByToken[tokenID]?.removeValue(forKey: ObjectIdentifier(end))
            if endsByToken[tokenID]?.isEmpty == true { endsByToken.removeValue(forKey: tokenID) }
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
    let tokenID: Int
    /// Why the stream must end early (revoked, expired, too slow a reader), asked by its loop.
    let end: StreamEnd

    fileprivate init(limiter: EventStreamLimiter, tokenID: Int, end: StreamEnd) {
        self.limiter = limiter
        self.tokenID = tokenID
        self.end = end
    }

    deinit {
        end.finish()
        limiter.close(tokenID: tokenID, end: end)
    }
}
