import BeaconKit
import Foundation

/// The Nerdery-style directory of one organisation: majors are locations, minors come in
/// groups of 1000 by category, and every identity has a human-readable label.
public struct Directory: Sendable, Hashable, Codable {
    public struct Entry: Sendable, Hashable, Codable {
        public var minor: UInt16
        public var category: Int
        public var label: String
        public var x: Double
        public var y: Double
    }

    public struct Location: Sendable, Hashable, Codable {
        public var uuid: UUID
        public var major: UInt16
        public var name: String
        public var address: String
        public var planWidth: Double
        public var planHeight: Double
        public var minors: [Entry]
    }

    public var organisation: Organisation
    /// Category code (as a string key, as JSON objects need) → name, e.g. "1": "Conference Room".
    public var categories: [String: String]
    public var locations: [Location]

    public static let csvColumns = ["uuid", "major", "site", "address", "plan_width", "plan_height",
                                    "minor", "category", "category_name", "label", "x", "y"]

    /// One line per minor, each repeating its location, so the CSV carries everything the JSON
    /// form does and a CSV round trip loses nothing.
    public func csv() -> String {
        var rows = [Self.csvColumns]
        for location in locations {
            for entry in location.minors {
                rows.append([location.uuid.uuidString, String(location.major), location.name, location.address,
                             format(location.planWidth), format(location.planHeight), String(entry.minor),
                             String(entry.category), categories[String(entry.category)] ?? "", entry.label,
                             format(entry.x), format(entry.y)])
            }
        }
        return CSV.render(rows)
    }

    /// Whole metres without a decimal point; any other finite value (a plan may be as large as
    /// a Double allows) as Swift's shortest form, which reads back as the same Double.
    private func format(_ value: Double) -> String {
        Int(exactly: value).map { String($0) } ?? String(value)
    }

    /// Reads the CSV form for an organisation; line and column name each refusal. Every row must
    /// carry one of the organisation's proximity UUIDs: an import touches only the organisation
    /// it names. Files without the address and plan columns (older exports) still read.
    public static func parseCSV(_ text: String, organisation: Organisation) throws(ServerInputError) -> Directory {
        let table = try CSV.Table(text: text, required: ["uuid", "major", "site", "minor", "label"])
        var categories: [String: String] = [:]
        var locations: [Location] = []
        // Found by key, not by scanning `locations`: a file of many distinct majors would
        // otherwise cost time quadratic in its rows.
        var locationIndex: [LocationKey: Int] = [:]
        for row in table.rows.indices {
            let uuidText = try table.required("uuid", row: row)
            guard let uuid = UUID(uuidString: uuidText) else {
                throw ServerInputError(field: "line \(row + 2), column uuid", reason: "expected a UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, found '\(uuidText)'")
            }
            guard organisation.proximityUUIDs.contains(uuid) else {
                throw ServerInputError(field: "line \(row + 2), column uuid",
                    reason: "expected a proximity UUID of organisation '\(organisation.name)' (\(organisation.proximityUUIDs.map(\.uuidString).joined(separator: ", "))), found \(uuid.uuidString)")
            }
            let major = try sixteenBits(table.int("major", row: row), column: "major", row: row)
            let minor = try sixteenBits(table.int("minor", row: row), column: "minor", row: row)
            let category = try table.int("category", row: row) ?? Int(minor) / NumberingPlan.groupSize
            if let name = table.text("category_name", row: row) { categories[String(category)] = name }
            let entry = Entry(minor: minor, category: category, label: try table.required("label", row: row),
                              x: try table.double("x", row: row) ?? 0, y: try table.double("y", row: row) ?? 0)
            if let index = locationIndex[LocationKey(uuid: uuid, major: major)] {
                locations[index].minors.append(entry)
            } else {
                locationIndex[LocationKey(uuid: uuid, major: major)] = locations.count
                locations.append(Location(uuid: uuid, major: major, name: try table.required("site", row: row),
                                          address: table.text("address", row: row) ?? "",
                                          planWidth: try table.double("plan_width", row: row) ?? 0,
                                          planHeight: try table.double("plan_height", row: row) ?? 0, minors: [entry]))
            }
        }
        return Directory(organisation: organisation, categories: categories, locations: locations)
    }

    private struct LocationKey: Hashable {
        var uuid: UUID
        var major: UInt16
    }

    private static func sixteenBits(_ value: Int?, column: String, row: Int) throws(ServerInputError) -> UInt16 {
        guard let value else {
            throw ServerInputError(field: "line \(row + 2), column \(column)", reason: "expected a value in 0…65535, found none")
        }
        guard let number = UInt16(exactly: value) else {
            throw ServerInputError(field: "line \(row + 2), column \(column)", reason: "expected a value in 0…65535, found \(value)")
        }
        return number
    }
}

extension Directory {
    /// Refuses control characters in any name or label and minors outside their category's
    /// group, naming the field, before anything is written.
    func checkNamesAndMinors() throws(RegistryError) {
        let plan = NumberingPlan()
        try NameText.check(organisation.name, field: "organisation.name")
        for (code, name) in categories {
            try NameText.check(name, field: "categories.\(code)")
        }
        for (index, location) in locations.enumerated() {
            try NameText.check(location.name, field: "locations[\(index)].name")
            try NameText.check(location.address, field: "locations[\(index)].address")
            for (entryIndex, entry) in location.minors.enumerated() {
                let field = "locations[\(index)].minors[\(entryIndex)]"
                try NameText.check(entry.label, field: "\(field).label")
                let range: ClosedRange<Int>
                do {
                    range = try plan.minors(ofCategory: entry.category)
                } catch {
                    throw RegistryError(.invalid, field: "\(field).category", error.message)
                }
                guard range.contains(Int(entry.minor)) else {
                    throw RegistryError(.invalid, field: "\(field).minor",
                        "expected a minor of category \(entry.category) in \(range.lowerBound)…\(range.upperBound), found \(entry.minor)")
                }
            }
        }
    }
}
