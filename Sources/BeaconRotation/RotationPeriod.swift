import Foundation

/// How long one rotated identity lasts. Periods are counted from the Unix epoch
/// (1970-01-01T00:00:00Z), so 24-hour periods change at midnight UTC on every beacon and server
/// without anything else to agree on.
public struct RotationPeriod: Sendable, Hashable, CustomStringConvertible {
    public static let shortest = 60
    /// A year: longer periods would barely rotate.
    public static let longest = 366 * 86_400
    public static let day = try! RotationPeriod(seconds: 86_400)

    public let seconds: Int

    public init(seconds: Int, field: String = "period") throws(RotationInputError) {
        guard (Self.shortest...Self.longest).contains(seconds) else {
            throw RotationInputError(field: field, reason: "expected a period of 1 minute (60 s) to 366 days, found \(seconds) s")
        }
        self.seconds = seconds
    }

    /// Reads `24h`, `90m`, `2d`, `3600s` or a plain number of seconds.
    public init(parsing text: String, field: String = "period") throws(RotationInputError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(suffix: String, seconds: Int)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
        var number = Substring(trimmed), scale = 1
        if let unit = units.first(where: { trimmed.hasSuffix($0.suffix) }) {
            number = trimmed.dropLast(unit.suffix.count)
            scale = unit.seconds
        }
        guard number.count <= 12, let count = Int(number), count > 0 else {
            throw RotationInputError(field: field, reason: "expected a duration such as 24h, 15m, 2d or 3600s, found '\(text.prefix(40))'")
        }
        try self.init(seconds: count * scale, field: field)
    }

    /// The number of the period that holds `time` (seconds since 1970): floor(time / length).
    public func number(at time: Double) -> Int64 {
        Int64((time / Double(seconds)).rounded(.down))
    }

    /// When period `number` starts, in seconds since 1970.
    public func start(of number: Int64) -> Double {
        Double(number) * Double(seconds)
    }

    /// How long after a boundary the previous period's identity still resolves, for clock skew
    /// between beacon and server: a tenth of the period, at most an hour.
    public var grace: Double { min(Double(seconds) / 10, 3_600) }

    public var description: String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400)d" }
        if seconds % 3_600 == 0 { return "\(seconds / 3_600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}
