import Logging
import SQLKit
import ServiceLifecycle

extension ProximaServer {
    /// Ends the open streams of a token this instance revoked, at once.
    func endStreams(ofToken tokenID: Int, reason: String) async {
        await wake(streams.end(tokenID: tokenID, reason: reason, at: clock()))
    }

    /// Ends the open streams of a deleted gateway's or device's tokens.
    func endStreams(ofGateway gatewayID: String, reason: String) async {
        await wake(streams.end(gatewayID: gatewayID, reason: reason, at: clock()))
    }

    /// Wakes the loops of streams told to end, so each writes why and closes now rather than at
    /// its next poll. One stuck writing (its client reads nothing) cannot; the next sweep closes
    /// its connection (``endStreamsThatMustEnd()``).
    func wake(_ ends: [StreamEnd]) async {
        guard !ends.isEmpty else { return }
        metrics.streamsEndedByToken.increment(by: Int64(ends.count))
        await events.wakeReaders()
        await Self.helpSignal.notify()
    }

    /// Once a second: ends the streams whose token expired, those of tokens another instance
    /// revoked (every instance reads the same tokens table), and those whose client stopped
    /// reading (their connection closes at once: the stream is stuck writing).
    struct StreamEndService: Service {
        let server: ProximaServer
        var interval: Duration = .seconds(1)

        func run() async {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do { try await server.intervalClock.sleep(for: interval) } catch { return }
                    await server.endStreamsThatMustEnd()
                }
            }
        }
    }

    func endStreamsThatMustEnd() async {
        let now = clock()
        for slow in streams.endSlowReaders(now: now, timeout: configuration.slowReaderTimeout.seconds) {
            slow.closeIfStuck(now: now, grace: 0)
            metrics.slowReadersClosed.increment()
        }
        let grace = configuration.streamEndGrace.seconds
        for end in streams.allEnds { end.closeIfStuck(now: now, grace: grace) }
        var ended = streams.endExpired(now: now)
        let open = streams.tokensWithStreams
        if !open.isEmpty, store.database.isMigrated {
            do {
                let working = try await store.unrevokedTokens(among: open)
                for tokenID in open where !working.contains(tokenID) {
                    ended += streams.end(tokenID: tokenID, reason: StreamEnd.revoked, at: now)
                }
            } catch {
                logger.warning("reading revoked tokens for open streams failed", metadata: ["error": "\(error)"])
            }
        }
        await wake(ended)
    }
}

extension Store {
    /// Which of `tokenIDs` still exist unrevoked (a deleted device's tokens are gone).
    func unrevokedTokens(among tokenIDs: [Int]) async throws -> Set<Int> {
        try await database.read { db in
            var working: Set<Int> = []
            // Bounded by the open streams (serve --max-streams); chunks keep each statement small.
            for start in stride(from: 0, to: tokenIDs.count, by: 500) {
                let chunk = Array(tokenIDs[start..<min(start + 500, tokenIDs.count)])
                working.formUnion(try await db.select().column("id").from("tokens")
                    .where("id", .in, chunk).where(SQLColumn("revoked_at"), .is, SQLLiteral.null)
                    .all().map { try $0.decode(column: "id", as: Int.self) })
            }
            return working
        }
    }
}
