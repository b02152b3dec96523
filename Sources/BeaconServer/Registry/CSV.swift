import Foundation

/// RFC 4180 comma-separated values: quoted fields may hold commas, quotes ("") and newlines.
public enum CSV {
    /// Rows of fields; errors name the line where the text stops making sense.
    public static func parse(_ text: String) throws(ServerInputError) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var inQuotes = false
        var afterQuote = false
        var line = 1
        var iterator = Array(text.unicodeScalars).makeIterator()
        var pending: Unicode.Scalar? = nil
        func next() -> Unicode.Scalar? {
            if let scalar = pending { pending = nil; return scalar }
            return iterator.next()
        }
        while let scalar = next() {
            if inQuotes {
                if scalar == "\"" {
                    let following = next()
                    if following == "\"" {
                        field.unicodeScalars.append("\"")
                    } else {
                        inQuotes = false
                        afterQuote = true
                        pending = following
                    }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                guard field.isEmpty, !afterQuote else {
                    throw ServerInputError(field: "line \(line)", reason: "a quote inside an unquoted field; quote the whole field and double inner quotes")
                }
                inQuotes = true
            case ",":
                row.append(field)
                field = ""
                afterQuote = false
            case "\r":
                continue
            case "\n":
                row.append(field)
                if !(row.count == 1 && row[0].isEmpty) { rows.append(row) }
                row = []
                field = ""
                afterQuote = false
                line += 1
            default:
                guard !afterQuote else {
                    throw ServerInputError(field: "line \(line)", reason: "text after a closing quote; expected a comma or the end of the line")
                }
                field.unicodeScalars.append(scalar)
            }
        }
        if inQuotes {
            throw ServerInputError(field: "line \(line)", reason: "a quoted field is never closed")
        }
        row.append(field)
        if !(row.count == 1 && row[0].isEmpty) { rows.append(row) }
        return rows
    }

    public static func escape(_ field: String) -> String {
        // Scalars, as `parse` reads: "\r\n" is one Character, equal to neither "\r" nor "\n", and
        // a quote followed by a combining mark is one Character too (found by `Fuzz/run.sh csv`).
        guard field.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for scalar in field.unicodeScalars {
            if scalar == "\"" { quoted.append("\"") }
            quoted.append(scalar)
        }
        quoted.append("\"")
        return String(quoted)
    }

    public static func render(_ rows: [[String]]) -> String {
        rows.map { $0.map(escape).joined(separator: ",") }.joined(separator: "\n") + "\n"
    }

    /// Rows read against a header line, with typed getters whose errors name line and column.
    public struct Table: Sendable {
        public let header: [String]
        public let rows: [[String]]

        public init(text: String, required: [String]) throws(ServerInputError) {
            let all = try CSV.parse(text)
            guard let header = all.first else {
                throw ServerInputError(field: "line 1", reason: "expected a header line with \(required.joined(separator: ",")), found nothing")
            }
            self.header = header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            for column in required where !self.header.contains(column) {
                throw ServerInputError(field: "line 1", reason: "the header lacks the column '\(column)'; expected \(required.joined(separator: ","))")
            }
            self.rows = Array(all.dropFirst())
        }

        public func text(_ column: String, row: Int) -> String? {
            guard let index = header.firstIndex(of: column), index < rows[row].count else { return nil }
            let value = rows[row][index].trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }

        public func required(_ column: String, row: Int) throws(ServerInputError) -> String {
            guard let value = text(column, row: row) else {
                throw ServerInputError(field: "line \(row + 2), column \(column)", reason: "expected a value, found none")
            }
            return value
        }

        public func int(_ column: String, row: Int) throws(ServerInputError) -> Int? {
            guard let value = text(column, row: row) else { return nil }
            guard let number = Int(value) else {
                throw ServerInputError(field: "line \(row + 2), column \(column)", reason: "expected an integer, found '\(value)'")
            }
            return number
        }

        public func double(_ column: String, row: Int) throws(ServerInputError) -> Double? {
            guard let value = text(column, row: row) else { return nil }
            guard let number = Double(value), number.isFinite else {
                throw ServerInputError(field: "line \(row + 2), column \(column)", reason: "expected a number, found '\(value)'")
            }
            return number
        }
    }
}
