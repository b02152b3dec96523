import Foundation
import NIOCore
import Synchronization

/// Why an open event stream ends before its client leaves: its token was revoked or expired, or
/// its client stopped reading. A stream's loop asks between pages and while it waits; when the
/// loop cannot ask (it is stuck writing to a client that reads nothing), the connection is
/// closed instead, so no ended stream keeps delivering.
final class StreamEnd: Sendable {
    /// The gateway or device the token belongs to, if any (deleting it ends the stream).
    let gatewayID: String?
    /// Seconds since 1970 on the server's clock, when the token stops working.
    let expiresAt: Double?
    private let state = Mutex(State())

    private struct State {
        var reason: String?
        /// When it was told to end, on the server's clock.
        var endedAt: Double?
        var connection: (any Channel)?
        var finished = false
        /// When the write under way began; nil between writes.
        var writingSince: Double?
    }

    init(gatewayID: String?, expiresAt: Double?) {
        self.gatewayID = gatewayID
        self.expiresAt = expiresAt
    }

    /// Why the stream must end now, or nil while it may go on.
    func reason(now: Double) -> String? {
        if let reason = state.withLock({ $0.reason }) { return reason }
        if let expiresAt, now >= expiresAt { return Self.expired }
        return nil
    }

    /// How long the stream may wait before it must look again (its token's expiry).
    func wait(atMost interval: Duration, now: Double) -> Duration {
        guard let expiresAt else { return interval }
        let left = max(0, expiresAt - now)
        return left < interval.seconds ? .milliseconds(Int64((left * 1000).rounded(.up))) : interval
    }

    /// Records why the stream ends; the first reason stays. False when it had ended already.
    @discardableResult
    func end(_ reason: String, at now: Double) -> Bool {
        state.withLock { state in
            guard state.reason == nil, !state.finished else { return false }
            state.reason = reason
            state.endedAt = now
            return true
        }
    }

    /// Runs one write to the client, timed: a write its client does not take for
    /// `slowReaderTimeout` ends the stream (``isStuckWriting(now:timeout:)``).
    func writing(now: Double, _ write: () async throws -> Void) async throws {
        state.withLock { $0.writingSince = now }
        defer { state.withLock { $0.writingSince = nil } }
        try await write()
    }

    /// Whether a write has waited on the client for `timeout` seconds by `now`.
    func isStuckWriting(now: Double, timeout: Double) -> Bool {
        state.withLock { state in state.writingSince.map { now - $0 >= timeout } ?? false }
    }

    /// The connection to close when the stream cannot end by itself.
    func attach(_ connection: any Channel) {
        state.withLock { $0.connection = connection }
    }

    /// The stream's loop has returned; nothing is left to close.
    func finish() {
        state.withLock { $0.finished = true }
    }

    /// Closes the connection of a stream told to end at least `grace` seconds before `now` that
    /// has not (it is stuck writing to a client that reads nothing). Returns whether it did.
    @discardableResult
    func closeIfStuck(now: Double, grace: Double) -> Bool {
        let connection: (any Channel)? = state.withLock { state in
            guard let endedAt = state.endedAt, now - endedAt >= grace, !state.finished else { return nil }
            state.finished = true
            return state.connection
        }
        connection?.close(promise: nil)
        return connection != nil
    }

    static let revoked = "the token was revoked"
    static let deleted = "the device was deleted"
    static let expired = "the token expired"
    static let slowReader = "the client did not read its events in time; resume with Last-Event-ID"
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
