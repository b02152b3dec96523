@testable import BeaconServer
import BeaconTesting
import Synchronization
import Testing

/// The catch-up budget: at most its slots read at once, and tokens take turns, so a token with
/// many streams behind the ring cannot keep another token's stream (or anyone else) waiting
/// for more than a turn.
@Suite struct CatchUpReadsTests {
    final class Order: Sendable {
        let served = Mutex<[String]>([])
        func add(_ name: String) { served.withLock { $0.append(name) } }
    }

    final class Running: Sendable {
        let counts = Mutex((now: 0, most: 0))
        func enter() { counts.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
        func leave() { counts.withLock { $0.now -= 1 } }
    }

    /// Blocks the one slot until `open()` is called.
    final class Gate: Sendable {
        private let state = Mutex<(entered: Bool, continuation: CheckedContinuation<Void, Never>?)>((false, nil))
        func hold() async {
            await withCheckedContinuation { continuation in state.withLock { $0 = (true, continuation) } }
        }
        var entered: Bool { state.withLock { $0.entered && $0.continuation != nil } }
        func open() { state.withLock { $0.continuation }?.resume() }
    }

    static func waitUntil(_ condition: () -> Bool) async {
        // The reads queue on other tasks; each yield lets one of them run to its wait.
        while !condition() { await Task.yield() }
    }

    @Test(.timeLimit(.minutes(1)))
    func tokensTakeTurnsForTheSlot() async {
        let reads = CatchUpReads(slots: 1)
        let order = Order()
        let gate = Gate()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await reads.withSlot(tokenID: 1) { await gate.hold() } }
            await Self.waitUntil { gate.entered }
            // Token 1 queues four reads before token 2 queues one.
            for index in 0..<4 {
                group.addTask { try? await reads.withSlot(tokenID: 1) { order.add("A\(index)") } }
                await Self.waitUntil { reads.waitingCount == index + 1 }
            }
            group.addTask { try? await reads.withSlot(tokenID: 2) { order.add("B") } }
            await Self.waitUntil { reads.waitingCount == 5 }
            gate.open()
        }
        #expect(order.served.withLock { $0 } == ["A0", "B", "A1", "A2", "A3"])
        #expect(reads.waitingCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func noMoreThanTheSlotsReadAtOnce() async {
        let reads = CatchUpReads(slots: 2)
        let running = Running()
        await withTaskGroup(of: Void.self) { group in
            for token in 0..<20 {
                group.addTask {
                    try? await reads.withSlot(tokenID: token % 3) {
                        running.enter()
                        for _ in 0..<10 { await Task.yield() }
                        running.leave()
                    }
                }
            }
        }
        #expect(running.counts.withLock { $0.most } == 2)
        #expect(running.counts.withLock { $0.now } == 0)
    }
}

extension CatchUpReadsTests {
    /// With a quarter of the time, a read that took 1 s keeps the slot 3 s more: the next read
    /// starts only when the clock reaches it.
    @Test(.timeLimit(.minutes(1)))
    func aSlotRestsForWhatItsShareLeaves() async {
        let clock = TestClock()
        let reads = CatchUpReads(slots: 1, share: 0.25, clock: clock)
        let order = Order()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = try? await reads.withSlot(tokenID: 1) { clock.advance(by: .seconds(1)) } }
            await clock.waitForSleepers(1)
            group.addTask { _ = try? await reads.withSlot(tokenID: 2) { order.add("second at \(clock.now.offset)") } }
            await Self.waitUntil { reads.waitingCount == 1 }
            clock.advance(by: .milliseconds(2_999))
            #expect(order.served.withLock { $0 }.isEmpty, "the slot rests 3 s")
            clock.advance(by: .milliseconds(1))
        }
        #expect(order.served.withLock { $0 } == ["second at 4.0 seconds"])
    }
}

/// A stream's end: the first reason stays, an expiry shortens the wait, and only a stream told
/// to end (or stuck writing) loses its connection.
@Suite struct StreamEndStateTests {
    @Test func theFirstReasonStaysAndExpiryCounts() {
        let end = StreamEnd(gatewayID: nil, expiresAt: 100)
        #expect(end.reason(now: 99) == nil)
        #expect(end.reason(now: 100) == StreamEnd.expired)
        let revoked = StreamEnd(gatewayID: nil, expiresAt: nil)
        #expect(revoked.end(StreamEnd.revoked, at: 5))
        #expect(!revoked.end(StreamEnd.slowReader, at: 6))
        #expect(revoked.reason(now: 7) == StreamEnd.revoked)
    }

    @Test func aWaitStopsAtTheExpiry() {
        let end = StreamEnd(gatewayID: nil, expiresAt: 100)
        #expect(end.wait(atMost: .milliseconds(250), now: 99.9) == .milliseconds(100))
        #expect(end.wait(atMost: .milliseconds(250), now: 10) == .milliseconds(250))
        #expect(end.wait(atMost: .milliseconds(250), now: 200) == .zero)
        #expect(StreamEnd(gatewayID: nil, expiresAt: nil).wait(atMost: .seconds(1), now: 0) == .seconds(1))
    }

    @Test func aWriteIsStuckOnlyWhileItWaits() async throws {
        let end = StreamEnd(gatewayID: nil, expiresAt: nil)
        #expect(!end.isStuckWriting(now: 1_000, timeout: 10))
        try await end.writing(now: 0) {
            #expect(!end.isStuckWriting(now: 9.9, timeout: 10))
            #expect(end.isStuckWriting(now: 10, timeout: 10))
        }
        #expect(!end.isStuckWriting(now: 1_000, timeout: 10), "the write returned")
    }
}
