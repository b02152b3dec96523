@testable import BeaconServer
import Foundation
import Testing

/// The pure rules behind check-ins and queues, and the wait histogram, with times given by the
/// test.
@Suite("Check-in and queue rules")
struct QueueRulesTests {
    let checkin = CheckinRule(dwell: 60, absence: 300)

    @Test func aDeviceChecksInOncePerVisitWhenItsDwellPassesTheThreshold() {
        var (visit, checkIns) = checkin.step(nil, transitions: [.enter(100)], now: 130)
        #expect(checkIns.isEmpty)
        (visit, checkIns) = checkin.step(visit, transitions: [], now: 170)
        #expect(checkIns == [CheckinRule.CheckIn(visitStart: 100, time: 160)])
        (visit, checkIns) = checkin.step(visit, transitions: [], now: 400)
        #expect(checkIns.isEmpty, "once per visit")
        // Out for less than the absence: the same visit, no second check-in.
        (visit, checkIns) = checkin.step(visit, transitions: [.exit(420), .enter(600)], now: 700)
        #expect(checkIns.isEmpty)
        #expect(visit?.start == 100)
        // Out for the absence: a new visit, which checks in again.
        (visit, checkIns) = checkin.step(visit, transitions: [.exit(710), .enter(1_010)], now: 1_100)
        #expect(checkIns == [CheckinRule.CheckIn(visitStart: 1_010, time: 1_070)])
    }

    @Test func dwellAddsUpOverAVisitsStaysAndIgnoresOlderTransitions() {
        var (visit, checkIns) = checkin.step(nil, transitions: [.enter(0), .exit(40), .enter(100)], now: 110)
        #expect(checkIns.isEmpty)
        #expect(visit?.dwellBefore == 40)
        (visit, checkIns) = checkin.step(visit, transitions: [.exit(130)], now: 130)
        #expect(checkIns == [CheckinRule.CheckIn(visitStart: 0, time: 120)])
        // A late batch's transitions, older than those applied, change nothing.
        let (late, lateCheckIns) = checkin.step(visit, transitions: [.enter(50), .exit(60)], now: 60)
        #expect(late == visit && lateCheckIns.isEmpty)
        #expect(checkin.isOver(visit!, at: 430) && !checkin.isOver(visit!, at: 429))
    }

    let queue = QueueRule(abandonAfter: 120)

    @Test func aWaitRunsFromTheEntryEnterToTheServiceEnter() {
        var (passage, outcomes) = queue.step(nil, observations: [.entryEnter(10), .seen(50)])
        #expect(outcomes.isEmpty && passage == QueueRule.Passage(enteredAt: 10, lastSeen: 50, served: false))
        (passage, outcomes) = queue.step(passage, observations: [.seen(100), .serviceEnter(130)])
        #expect(outcomes == [.served(enteredAt: 10, at: 130)])
        // Walking out past the entry zone after service starts nothing.
        (passage, outcomes) = queue.step(passage, observations: [.seen(150), .entryEnter(200), .seen(220)])
        #expect(outcomes.isEmpty && passage?.served == true)
        // Away for abandonAfter, then back: a new passage.
        (passage, outcomes) = queue.step(passage, observations: [.entryEnter(700)])
        #expect(outcomes.isEmpty && passage == QueueRule.Passage(enteredAt: 700, lastSeen: 700, served: false))
    }

    @Test func aDeviceAwayForAbandonAfterWithoutServiceAbandoned() {
        let (passage, _) = queue.step(nil, observations: [.entryEnter(10), .seen(40)])
        let (next, outcomes) = queue.step(passage, observations: [.entryEnter(160), .serviceEnter(170)])
        #expect(outcomes == [.abandoned(enteredAt: 10, at: 40), .served(enteredAt: 160, at: 170)])
        #expect(next?.served == true)
        #expect(!queue.isOver(passage!, at: 159) && queue.isOver(passage!, at: 160))
        #expect(queue.expire(passage!) == .abandoned(enteredAt: 10, at: 40))
        #expect(queue.expire(next!) == nil)
        // A service enter without a passage (a clerk's phone) counts nothing.
        #expect(queue.step(nil, observations: [.serviceEnter(5), .seen(6)]).outcomes.isEmpty)
    }

    @Test func histogramQuantilesAreWithinHalfAPercentOfTheExactOnes() throws {
        var generator = SystemRandomNumberGenerator()
        var histogram = WaitHistogram()
        var waits: [Double] = []
        for _ in 0..<5_000 {
            let wait = exp(Double.random(in: 0...9, using: &generator))
            waits.append(wait)
            histogram.add(wait)
        }
        waits.sort()
        for q in [0.1, 0.5, 0.9, 0.99] {
            let exact = try #require(WaitHistogram.exactQuantile(q, of: waits))
            let binned = try #require(histogram.quantile(q))
            #expect(abs(binned - exact) / exact <= 0.005 || exact < 1, "q \(q): \(binned) vs \(exact)")
        }
        // Hours merge by adding counts, and survive a round trip through JSON.
        var merged = WaitHistogram()
        merged.merge(histogram)
        merged.merge(try JSONDecoder().decode(WaitHistogram.self, from: JSONEncoder().encode(histogram)))
        #expect(merged.total == 10_000 && merged.quantile(0.5) == histogram.quantile(0.5))
        #expect(WaitHistogram().quantile(0.5) == nil)
    }
}
