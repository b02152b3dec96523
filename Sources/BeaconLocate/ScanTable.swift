import BeaconKit
import Foundation

/// Where a CSV file was refused: line (1-based) and column (1-based, 0 for the whole line).
public struct TableError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var expected: String
    public var found: String

    public var description: String {
        "\(file):\(line)\(column > 0 ? ":\(column)" : ""): expected \(expected), found \(found)"
    }
}

/// Beacon positions from a CSV file with header `id,x,y[,measured_power]`.
public enum BeaconTable {
    public static let maximumRows = SiteMap.Limits.beacons

    public static func parse(_ text: String, file: String = "beacons") throws(TableError) -> [MappedBeacon] {
        let lines = CSVLines(text)
        guard let header = lines.first else {
            throw TableError(file: file, line: 1, column: 0, expected: "a header id,x,y[,measured_power]", found: "an empty file")
        }
        let names = header.fields.map { $0.lowercased() }
        guard names.count >= 3, names[0] == "id", names[1] == "x", names[2] == "y",
              names.count == 3 || (names.count == 4 && names[3] == "measured_power") else {
            throw TableError(file: file, line: 1, column: 0, expected: "the header id,x,y[,measured_power]",
                             found: "\"\(header.fields.joined(separator: ",").prefix(80))\"")
        }
        var beacons: [MappedBeacon] = []
        var seen: Set<String> = []
        for line in lines.dropFirst() {
            guard beacons.count < maximumRows else {
                throw TableError(file: file, line: line.number, column: 0, expected: "at most \(maximumRows) beacons", found: "more")
            }
            guard line.fields.count == names.count else {
                throw TableError(file: file, line: line.number, column: 0, expected: "\(names.count) fields", found: "\(line.fields.count)")
            }
            let id = line.fields[0]
            guard !id.isEmpty, seen.insert(id).inserted else {
                throw TableError(file: file, line: line.number, column: 1, expected: "a beacon id used once", found: "\"\(id.prefix(40))\"")
            }
            let x = try number(line, 1, file: file), y = try number(line, 2, file: file)
            let power = names.count == 4 && !line.fields[3].isEmpty ? try number(line, 3, file: file, in: -127...20) : nil
            beacons.append(MappedBeacon(id: id, position: Position(x: x, y: y), measuredPower: power))
        }
        guard !beacons.isEmpty else {
            throw TableError(file: file, line: 2, column: 0, expected: "at least one beacon row", found: "none")
        }
        return beacons
    }

    static func number(_ line: CSVLine, _ index: Int, file: String, in range: ClosedRange<Double> = -1e6...1e6) throws(TableError) -> Double {
        let text = line.fields[index]
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw TableError(file: file, line: line.number, column: index + 1,
                             expected: "a number in \(range.lowerBound)...\(range.upperBound)", found: "\"\(text.prefix(40))\"")
        }
        return value
    }
}

/// One row of a scans file: the readings, and the optional time, receiver, truth and group.
public struct ScanRow: Sendable, Hashable {
    public var line: Int
    public var time: Double?
    public var receiver: String?
    public var readings: [Reading]
    public var truth: Position?
    /// The value of the grouping column (up to its first space: a date-time groups by day).
    public var group: String?
}

/// A scans CSV: a header naming beacon ids (the beacons file's), one scan per row, RSSI in dBm,
/// a sentinel for "not heard", optional `time` and `receiver` columns, and truth either as two
/// coordinate columns or as a grid-cell label (`O02`: column letters, A = 1, then the row).
public struct ScanTableLayout: Sendable, Hashable {
    public var missing: Double
    public var truthX: String?
    public var truthY: String?
    public var truthCell: String?
    public var cellSize: Double
    public var groupColumn: String?
    /// Seconds, or a date-time (`2016-10-18 11:15:21`, `2016-10-18T11:15:21Z` or `10-18-2016 11:15:21`).
    public var timeColumn: String

    public init(missing: Double, truthX: String? = nil, truthY: String? = nil, truthCell: String? = nil,
                cellSize: Double = 1, groupColumn: String? = nil, timeColumn: String = "time") {
        self.timeColumn = timeColumn
        self.missing = missing
        self.truthX = truthX
        self.truthY = truthY
        self.truthCell = truthCell
        self.cellSize = cellSize
        self.groupColumn = groupColumn
    }

    public static let maximumRows = 2_000_000

    public func parse(_ text: String, beacons: [MappedBeacon], file: String = "scans") throws(TableError) -> [ScanRow] {
        let lines = CSVLines(text)
        guard let header = lines.first else {
            throw TableError(file: file, line: 1, column: 0, expected: "a header naming beacon ids", found: "an empty file")
        }
        let beaconIndex = Dictionary(beacons.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        var beaconColumns: [(column: Int, beacon: Int)] = []
        var named: [String: Int] = [:]
        for (column, name) in header.fields.enumerated() {
            if let beacon = beaconIndex[name] { beaconColumns.append((column, beacon)) } else { named[name] = column }
        }
        guard !beaconColumns.isEmpty else {
            throw TableError(file: file, line: 1, column: 0, expected: "columns named like the beacons (\(beacons.prefix(3).map(\.id).joined(separator: ", "))…)",
                             found: "\"\(header.fields.joined(separator: ",").prefix(80))\"")
        }
        func column(_ name: String?, _ option: String) throws(TableError) -> Int? {
            guard let name else { return nil }
            guard let index = named[name] else {
                throw TableError(file: file, line: 1, column: 0, expected: "a column \"\(name)\" (\(option))", found: "none")
            }
            return index
        }
        let xColumn = try column(truthX, "--truth-x"), yColumn = try column(truthY, "--truth-y")
        let cellColumn = try column(truthCell, "--truth-cell"), groupIndex = try column(groupColumn, "--split-by")
        let timeIndex = timeColumn == "time" ? named["time"] : try column(timeColumn, "--time-column")
        let receiverColumn = named["receiver"]
        var scans: [ScanRow] = []
        for line in lines.dropFirst() {
            guard scans.count < Self.maximumRows else {
                throw TableError(file: file, line: line.number, column: 0, expected: "at most \(Self.maximumRows) scans", found: "more")
            }
            guard line.fields.count == header.fields.count else {
                throw TableError(file: file, line: line.number, column: 0, expected: "\(header.fields.count) fields", found: "\(line.fields.count)")
            }
            var readings: [Reading] = []
            for (column, beacon) in beaconColumns {
                let value = try BeaconTable.number(line, column, file: file, in: -1000...1000)
                if value != missing && value < 0 && value >= -127 { readings.append(Reading(beacon: beacon, rssi: value)) }
            }
            var truth: Position?
            if let xColumn, let yColumn {
                truth = Position(x: try BeaconTable.number(line, xColumn, file: file), y: try BeaconTable.number(line, yColumn, file: file))
            } else if let cellColumn {
                truth = try cell(line, cellColumn, file: file)
            }
            scans.append(ScanRow(line: line.number, time: try timeIndex.map { index throws(TableError) in try Self.time(line, index, file: file) },
                              receiver: receiverColumn.map { line.fields[$0] }, readings: readings, truth: truth,
                              group: groupIndex.map { String(line.fields[$0].split(separator: " ").first ?? "") }))
        }
        return scans
    }

    static func time(_ line: CSVLine, _ index: Int, file: String) throws(TableError) -> Double {
        let text = line.fields[index]
        if let seconds = Double(text), seconds.isFinite, abs(seconds) < 1e12 { return seconds }
        let numbers = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard numbers.count >= 6 else {
            throw TableError(file: file, line: line.number, column: index + 1,
                             expected: "seconds or a date-time such as 2016-10-18 11:15:21", found: "\"\(text.prefix(40))\"")
        }
        // Year first (ISO 8601) or last (US month-day-year).
        let (year, month, day) = numbers[0] > 31 ? (numbers[0], numbers[1], numbers[2]) : (numbers[2], numbers[0], numbers[1])
        guard (1...12).contains(month), (1...31).contains(day), (1...9999).contains(year),
              (0...23).contains(numbers[3]), (0...59).contains(numbers[4]), (0...60).contains(numbers[5]) else {
            throw TableError(file: file, line: line.number, column: index + 1, expected: "a valid date-time", found: "\"\(text.prefix(40))\"")
        }
        return Double(daysSinceEpoch(year: year, month: month, day: day) * 86_400 + numbers[3] * 3600 + numbers[4] * 60 + numbers[5])
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `O02` → column O (15), row 2, scaled by the cell size.
    private func cell(_ line: CSVLine, _ index: Int, file: String) throws(TableError) -> Position {
        let text = line.fields[index].uppercased()
        let letters = text.prefix { $0.isASCII && $0.isLetter }
        let digits = text.dropFirst(letters.count)
        guard (1...3).contains(letters.count), let row = Int(digits), (0...100_000).contains(row) else {
            throw TableError(file: file, line: line.number, column: index + 1, expected: "a cell label such as O02", found: "\"\(text.prefix(20))\"")
        }
        let columnNumber = letters.reduce(0) { $0 * 26 + Int($1.asciiValue! - 64) }
        return Position(x: Double(columnNumber) * cellSize, y: Double(row) * cellSize)
    }
}

struct CSVLine {
    var number: Int
    var fields: [String]
}

/// Lines of a simple CSV file (no quoted commas; blank lines skipped), numbered from 1.
/// Line ends are those of `Character.isNewline` ("\r\n" counts as one); fields are trimmed of
/// `CharacterSet.whitespaces`. It walks Unicode scalars rather than Characters and trims without
/// Foundation: a scan table of a dataset has hundreds of thousands of cells, and grapheme breaking
/// and NSString trimming were most of the time spent reading one.
func CSVLines(_ text: String) -> [CSVLine] {
    let scalars = text.unicodeScalars
    var lines: [CSVLine] = []
    var number = 0
    var lineStart = scalars.startIndex
    var index = lineStart
    while true {
        let atEnd = index == scalars.endIndex
        if atEnd || isLineBreak(scalars[index]) {
            number += 1
            if let fields = csvFields(scalars[lineStart..<index]) { lines.append(CSVLine(number: number, fields: fields)) }
            if atEnd { break }
            let breakScalar = scalars[index]
            index = scalars.index(after: index)
            if breakScalar == "\r", index < scalars.endIndex, scalars[index] == "\n" { index = scalars.index(after: index) }
            lineStart = index
        } else {
            index = scalars.index(after: index)
        }
    }
    return lines
}

/// The comma-separated fields of one line, trimmed; nil for a line of only spaces and tabs.
private func csvFields(_ line: Substring.UnicodeScalarView) -> [String]? {
    if line.allSatisfy({ $0 == " " || $0 == "\t" }) { return nil }
    var fields: [String] = []
    var fieldStart = line.startIndex
    var index = fieldStart
    while true {
        if index == line.endIndex || line[index] == "," {
            fields.append(trimmedField(line[fieldStart..<index]))
            if index == line.endIndex { break }
            index = line.index(after: index)
            fieldStart = index
        } else {
            index = line.index(after: index)
        }
    }
    return fields
}

private func trimmedField(_ field: Substring.UnicodeScalarView) -> String {
    guard let first = field.firstIndex(where: { !isFieldSpace($0) }) else { return "" }
    let last = field.lastIndex(where: { !isFieldSpace($0) })!
    return String(field[first...last])
}

/// `CharacterSet.whitespaces`: general category Zs and the tab.
private func isFieldSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar == " " || scalar == "\t" || (scalar.value >= 0x80 && scalar.properties.generalCategory == .spaceSeparator)
}

/// The line ends of `Character.isNewline`.
private func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
    default: false
    }
}
