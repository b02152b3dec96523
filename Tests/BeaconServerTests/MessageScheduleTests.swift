@testable import BeaconServer
import Foundation
import Testing

/// Schedules of messages of the day, evaluated in the venue's time zone by Foundation's
/// `TimeZone` (its IANA rules, daylight saving included).
@Suite("Message schedules")
struct MessageScheduleTests {
    static func at(_ text: String, _ zone: String = "UTC") throws -> Double {
        try AppsHarness.time(text, in: zone)
    }

    @Test func aWindowFollowsTheVenuesClockAcrossDaylightSaving() throws {
        // New York left daylight saving on Sunday 1 November 2026: 09:30 there was 13:30 UTC
        // on the Friday before and 14:30 UTC on the Monday after.
        let schedule = MessageSchedule(timeOfDay: .init(start: "09:00", end: "17:00"), timeZone: "America/New_York")
        #expect(schedule.applies(at: try Self.at("2026-10-30 13:30")))
        #expect(!schedule.applies(at: try Self.at("2026-11-02 13:30")))
        #expect(schedule.applies(at: try Self.at("2026-11-02 14:30")))
        #expect(!schedule.applies(at: try Self.at("2026-11-02 17:00", "America/New_York")), "the end is excluded")
    }

    @Test func daysAndDatesAreTheVenuesLocalOnes() throws {
        let schedule = MessageSchedule(from: "2026-11-23", to: "2026-11-29", days: [.mon, .sat], timeZone: "Asia/Tokyo")
        // 2026-11-22 20:00 UTC is Monday 23 November 05:00 in Tokyo.
        #expect(schedule.applies(at: try Self.at("2026-11-22 20:00")))
        #expect(!schedule.applies(at: try Self.at("2026-11-22 14:00")), "Sunday 23:00 in Tokyo, and before from")
        #expect(!schedule.applies(at: try Self.at("2026-11-24 12:00", "Asia/Tokyo")), "a Tuesday")
        #expect(schedule.applies(at: try Self.at("2026-11-28 23:59", "Asia/Tokyo")))
        #expect(!schedule.applies(at: try Self.at("2026-11-30 09:00", "Asia/Tokyo")), "a Monday after to")
    }

    @Test func aWindowPastMidnightBelongsToTheDayItOpened() throws {
        let schedule = MessageSchedule(days: [.fri], timeOfDay: .init(start: "22:00", end: "02:00"), timeZone: "Europe/London")
        // Friday 27 November 2026.
        #expect(schedule.applies(at: try Self.at("2026-11-27 23:00", "Europe/London")))
        #expect(schedule.applies(at: try Self.at("2026-11-28 01:30", "Europe/London")), "Saturday 01:30 is Friday night")
        #expect(!schedule.applies(at: try Self.at("2026-11-27 01:30", "Europe/London")), "Friday 01:30 is Thursday night")
        #expect(!schedule.applies(at: try Self.at("2026-11-28 02:00", "Europe/London")))
        #expect(!schedule.applies(at: try Self.at("2026-11-27 21:59", "Europe/London")))
    }

    @Test func anEndOfTwentyFourRunsToMidnight() throws {
        let schedule = try MessageSchedule(timeOfDay: .init(start: "20:00", end: "24:00")).validated(field: "schedule")
        #expect(schedule.applies(at: try Self.at("2026-11-23 23:59")))
        #expect(!schedule.applies(at: try Self.at("2026-11-24 00:00")))
    }

    @Test func alwaysAppliesAndSurvivesJSON() throws {
        #expect(MessageSchedule.always.applies(at: 0))
        let schedule = MessageSchedule(from: "2026-01-01", days: [.sun], timeOfDay: .init(start: "10:00", end: "11:00"), timeZone: "Europe/Paris")
        let decoded = try JSONDecoder().decode(MessageSchedule.self, from: JSONEncoder().encode(schedule))
        #expect(decoded == schedule)
    }

    @Test(arguments: [("2026-02-29", false), ("2028-02-29", true), ("2026-04-31", false), ("2026-13-01", false),
                      ("26-01-01", false), ("2026-1-01", false), ("2026-12-31", true)])
    func datesMustExist(date: String, valid: Bool) {
        #expect((MessageSchedule.dayNumber(date) != nil) == valid)
    }
}
