import Foundation
@testable import BeaconKit

/// Loads the real-data fixtures (provenance in Fixtures/README.md).
enum DataFixtures {
    static func url(_ path: String) throws -> URL {
        guard let base = Bundle.module.resourceURL else { throw FixtureError(message: "no resource bundle") }
        return base.appendingPathComponent("Fixtures").appendingPathComponent(path)
    }

    /// A CSV file as rows of named fields; a malformed line is an error naming the line.
    static func csv(_ path: String) throws -> [[String: String]] {
        let text = try String(contentsOf: url(path), encoding: .utf8)
        var lines = text.split(whereSeparator: \.isNewline).map(String.init)
        guard !lines.isEmpty else { throw FixtureError(message: "\(path): empty") }
        let header = lines.removeFirst().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return try lines.enumerated().map { offset, line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == header.count else {
                throw FixtureError(message: "\(path) line \(offset + 2): expected \(header.count) fields, found \(fields.count)")
            }
            return Dictionary(uniqueKeysWithValues: zip(header, fields))
        }
    }

    static func field<T: LosslessStringConvertible>(_ row: [String: String], _ name: String, as type: T.Type = T.self) throws -> T {
        guard let text = row[name], let value = T(text) else {
            throw FixtureError(message: "field \(name): expected \(T.self), found '\(row[name] ?? "nothing")'")
        }
        return value
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
}
