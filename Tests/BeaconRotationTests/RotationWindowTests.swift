import BeaconKit
@testable import BeaconRotation
import Foundation
import Testing

/// The window rule at the boundaries: current and next resolve, the previous only within the
/// grace (a tenth of the period, at most an hour), anything older is a replay.
@Suite struct RotationWindowTests {
    static let day = RotationPeriod.day
    static let boundary = 20_000.0 * 86_400

    @Test func graceIsATenthCappedAtAnHour() throws {
        #expect(Self.day.grace == 3_600)
        #expect(try RotationPeriod(seconds: 600).grace == 60)
        #expect(try RotationPeriod(seconds: 36_000).grace == 3_600)
    }

    @Test func verdictsAroundADayBoundary() {
        let day = Self.day, boundary = Self.boundary
        #expect(day.verdict(period: 20_000, at: boundary) == .current)
        #expect(day.verdict(period: 20_001, at: boundary) == .next)
        #expect(day.verdict(period: 19_999, at: boundary) == .previousWithinGrace)
        #expect(day.verdict(period: 19_999, at: boundary + 3_599.9) == .previousWithinGrace)
        #expect(day.verdict(period: 19_999, at: boundary + 3_600) == .replay(periodsAgo: 1))
        #expect(day.verdict(period: 19_999, at: boundary + 43_200) == .replay(periodsAgo: 1))
        #expect(day.verdict(period: 19_998, at: boundary + 1) == .replay(periodsAgo: 2))
        #expect(day.verdict(period: 20_002, at: boundary) == .future(periodsAhead: 2))
        #expect(day.verdict(period: 20_000, at: boundary - 0.5) == .next)
        #expect(!RotationVerdict.replay(periodsAgo: 1).resolves && RotationVerdict.previousWithinGrace.resolves)
    }

    @Test func minutePeriodsHaveSixSecondsOfGrace() throws {
        let minute = try RotationPeriod(seconds: 60)
        let start = 1_000_000.0 * 60
        #expect(minute.verdict(period: 999_999, at: start + 5.9) == .previousWithinGrace)
        #expect(minute.verdict(period: 999_999, at: start + 6) == .replay(periodsAgo: 1))
        #expect(minute.replayLookback == 96)
        #expect(Self.day.replayLookback == 2)
    }

    @Test func indexFindsTheBeaconOfEveryWindowIdentityAndFlagsYesterday() throws {
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        let beacons = try (1...50).map { number -> (id: Int, identity: RotatingIdentity) in
            (number, RotatingIdentity(uuid: uuid, key: try RotationKey(bytes: Array(repeating: UInt8(number), count: 16))))
        }
        let now = Self.boundary + 7_200
        let index = RotationIndex(beacons, at: now)
        // Next, current and two past periods per beacon, whatever the history before them.
        #expect(index.count == 50 * 4)
        #expect(index.validUntil == Self.boundary + 86_400)
        let seventh = beacons[6].identity
        #expect(index.match(seventh.identity(forPeriod: 20_000), at: now) == .init(beacon: 7, period: 20_000, verdict: .current))
        #expect(index.match(seventh.identity(forPeriod: 20_001), at: now)?.verdict == .next)
        #expect(index.match(seventh.identity(forPeriod: 19_999), at: now) == .init(beacon: 7, period: 19_999, verdict: .replay(periodsAgo: 1)))
        #expect(index.match(seventh.identity(forPeriod: 19_999), at: Self.boundary + 60)?.verdict == .previousWithinGrace)
        #expect(index.match(seventh.identity(forPeriod: 19_990), at: now) == nil)
        #expect(index.match(BeaconIdentity(uuid: UUID(), major: 1, minor: 2), at: now) == nil)
        #expect(!index.isStale(at: now + 1) && index.isStale(at: Self.boundary + 86_400))
    }
}
