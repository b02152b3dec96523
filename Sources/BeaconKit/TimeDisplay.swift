import Foundation

/// How a sighting's or an event's time is shown to a person, the same in every listing.
public enum TimeDisplay {
    /// Wall-clock times (seconds since 1970, from 2001 on) as ISO 8601 in UTC with
    /// milliseconds, e.g. `2026-11-23T11:48:02.123Z`; smaller times are a source's own clock
    /// (simulated seconds from the start), shown as seconds with milliseconds, e.g. `12.345`.
    public static func string(_ time: Double) -> String {
        guard time >= wallClockStart, time.isFinite else { return String(format: "%.3f", time) }
        return Date(timeIntervalSince1970: time).formatted(format)
    }

    /// 2001-09-09: earlier times cannot come from a live clock.
    static let wallClockStart = 1_000_000_000.0
    private static let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
}
