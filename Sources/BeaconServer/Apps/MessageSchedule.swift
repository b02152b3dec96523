import Foundation

/// When a message of the day applies, in the venue's own time zone: a range of dates, days of
/// the week and a time-of-day window, each optional. A pure value: ``applies(at:)`` takes the
/// time (the server's injected clock), so tests move time freely.
///
/// A window whose end is before its start runs past midnight (`22:00`–`02:00`); its hours after
/// midnight belong to the day it opened, so "Fridays 22:00–02:00" includes Saturday 01:00 and
/// not Friday 01:00. Dates and days are those of the opening day too.
public struct MessageSchedule: Sendable, Hashable, Codable {
    public enum Weekday: String, Sendable, Hashable, Codable, CaseIterable {
        case mon, tue, wed, thu, fri, sat, sun

        /// Foundation's `Calendar` numbers weekdays 1 (Sunday) … 7 (Saturday).
        init?(calendarWeekday: Int) {
            let order: [Weekday] = [.sun, .mon, .tue, .wed, .thu, .fri, .sat]
            guard (1...7).contains(calendarWeekday) else { return nil }
            self = order[calendarWeekday - 1]
        }
    }

    /// A time-of-day window, `"HH:MM"` each; `end` is excluded and may be `"24:00"`.
    public struct TimeOfDay: Sendable, Hashable, Codable {
        public var start: String
        public var end: String

        public init(start: String, end: String) {
            self.start = start
            self.end = end
        }
    }

    /// First local date it applies, `YYYY-MM-DD`, inclusive; nil: no start.
    public var from: String?
    /// Last local date it applies, inclusive; nil: no end.
    public var to: String?
    /// nil: every day.
    public var days: [Weekday]?
    /// nil: all day.
    public var timeOfDay: TimeOfDay?
    /// An IANA time zone name (`Europe/London`), as Foundation's `TimeZone` knows them.
    public var timeZone: String

    public init(from: String? = nil, to: String? = nil, days: [Weekday]? = nil, timeOfDay: TimeOfDay? = nil, timeZone: String = "UTC") {
        self.from = from
        self.to = to
        self.days = days
        self.timeOfDay = timeOfDay
        self.timeZone = timeZone
    }

    /// Always, in UTC.
    public static let always = MessageSchedule()

    private enum CodingKeys: String, CodingKey { case from, to, days, timeOfDay, timeZone }

    /// Reads loosely (days and times as text), so that ``validated(field:)`` can name the
    /// exact element that is wrong (`schedule.days[2]`) instead of a decoder's generic message.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        from = try container.decodeIfPresent(String.self, forKey: .from)
        to = try container.decodeIfPresent(String.self, forKey: .to)
        if container.contains(.days), try !container.decodeNil(forKey: .days) {
            var list = try container.nestedUnkeyedContainer(forKey: .days)
            var days: [Weekday] = []
            while !list.isAtEnd {
                let index = list.currentIndex
                let name = try list.decode(String.self)
                guard let day = Weekday(rawValue: name.lowercased()) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: list.codingPath + [ElementKey(index)],
                        debugDescription: "expected one of mon, tue, wed, thu, fri, sat, sun, found '\(name.prefix(20))'"))
                }
                days.append(day)
            }
            self.days = days
        }
        timeOfDay = try container.decodeIfPresent(TimeOfDay.self, forKey: .timeOfDay)
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone) ?? "UTC"
    }

    private struct ElementKey: CodingKey {
        var intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    /// Checks every part, naming `field.part` in the refusal.
    public func validated(field: String) throws(RegistryError) -> MessageSchedule {
        guard timeZone.utf8.count <= 64, TimeZone(identifier: timeZone) != nil else {
            throw RegistryError(.invalid, field: "\(field).timeZone", "expected an IANA time zone name such as Europe/London, found '\(timeZone.prefix(64))'")
        }
        for (name, date) in [("from", from), ("to", to)] {
            if let date, Self.dayNumber(date) == nil {
                throw RegistryError(.invalid, field: "\(field).\(name)", "expected a date YYYY-MM-DD, found '\(date.prefix(20))'")
            }
        }
        if let from, let to, from > to {
            throw RegistryError(.invalid, field: "\(field).to", "expected a date on or after from (\(from)), found \(to)")
        }
        if let days {
            guard !days.isEmpty else {
                throw RegistryError(.invalid, field: "\(field).days", "expected at least one day, or no days field for every day")
            }
            if let repeated = days.indices.first(where: { days[..<$0].contains(days[$0]) }) {
                throw RegistryError(.invalid, field: "\(field).days[\(repeated)]", "'\(days[repeated].rawValue)' is listed twice")
            }
        }
        if let timeOfDay {
            guard let start = Self.minutes(timeOfDay.start), start < 24 * 60 else {
                throw RegistryError(.invalid, field: "\(field).timeOfDay.start", "expected HH:MM in 00:00…23:59, found '\(timeOfDay.start.prefix(20))'")
            }
            guard let end = Self.minutes(timeOfDay.end) else {
                throw RegistryError(.invalid, field: "\(field).timeOfDay.end", "expected HH:MM in 00:00…24:00, found '\(timeOfDay.end.prefix(20))'")
            }
            guard start != end % (24 * 60) else {
                throw RegistryError(.invalid, field: "\(field).timeOfDay.end", "expected an end different from the start (\(timeOfDay.start)); leave timeOfDay out for all day")
            }
        }
        return self
    }

    /// Whether the schedule applies at `time` (seconds since 1970). A schedule that fails
    /// ``validated(field:)`` never applies.
    public func applies(at time: Double) -> Bool {
        guard let zone = TimeZone(identifier: timeZone) else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = Date(timeIntervalSince1970: time)
        var opening = date
        if let timeOfDay {
            guard let start = Self.minutes(timeOfDay.start), let end = Self.minutes(timeOfDay.end) else { return false }
            let parts = calendar.dateComponents([.hour, .minute], from: date)
            let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
            if start < end {
                guard minute >= start, minute < end else { return false }
            } else if minute < end % (24 * 60) {
                guard let previous = calendar.date(byAdding: .day, value: -1, to: date) else { return false }
                opening = previous
            } else {
                guard minute >= start else { return false }
            }
        }
        let day = calendar.dateComponents([.year, .month, .day, .weekday], from: opening)
        if let days {
            guard let weekday = day.weekday.flatMap(Weekday.init(calendarWeekday:)), days.contains(weekday) else { return false }
        }
        let dateText = String(format: "%04d-%02d-%02d", day.year ?? 0, day.month ?? 0, day.day ?? 0)
        if let from, dateText < from { return false }
        if let to, dateText > to { return false }
        return true
    }

    /// `HH:MM` as minutes after midnight, 0…1440.
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let hour = Int(parts[0]), let minute = Int(parts[1]), minute < 60 else { return nil }
        let total = hour * 60 + minute
        return total <= 24 * 60 ? total : nil
    }

    /// A real calendar date `YYYY-MM-DD` (not 2026-02-30), as a comparable number.
    static func dayNumber(_ text: String) -> Int? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), day >= 1 else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= lengths[month - 1] else { return nil }
        return year * 10_000 + month * 100 + day
    }
}
