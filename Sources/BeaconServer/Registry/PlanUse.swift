import Foundation
import SQLKit

/// How much of a site's numbering plan each category uses: the minors it owns, how many zones
/// hold one, how many are free and the next one a new zone would get. Computed by the server
/// from one grouped count, so its cost is bounded by the plan (66 categories), not by history.
public struct PlanUse: Sendable, Hashable, Codable {
    public struct CategoryUse: Sendable, Hashable, Codable {
        public var code: Int
        /// Absent for a category with zones but no name in the registry.
        public var name: String?
        public var firstMinor: Int
        public var lastMinor: Int
        public var capacity: Int
        public var used: Int
        public var free: Int
        /// The lowest free minor; absent when the category is full.
        public var nextMinor: Int?
    }

    public var siteID: Int
    public var major: Int
    /// Named categories and any category that has zones, by code.
    public var categories: [CategoryUse]
}

extension Store {
    public func planUse(siteID: Int) async throws -> PlanUse {
        let site = try await self.site(id: siteID)
        let names = Dictionary(try await categories().map { ($0.code, $0.name) }, uniquingKeysWith: { first, _ in first })
        let plan = NumberingPlan()
        let (counts, minorsByCategory): ([Int: Int], [Int: [Int]]) = try await database.read { db in
            let counted = try await db.raw("SELECT category, COUNT(*) AS used FROM zones WHERE site_id = \(bind: siteID) GROUP BY category").all()
            var counts: [Int: Int] = [:]
            for row in counted { counts[try row.int("category")] = try row.int("used") }
            // The next free minor needs the used ones, but only of categories with room taken:
            // at most 999 per category.
            var minors: [Int: [Int]] = [:]
            for category in counts.keys where NumberingPlan.categories.contains(category) {
                let range = try plan.minors(ofCategory: category)
                let rows = try await db.raw("""
                    SELECT minor FROM zones WHERE site_id = \(bind: siteID) AND minor BETWEEN \(bind: range.lowerBound) AND \(bind: range.upperBound)
                    """).all()
                minors[category] = try rows.map { try $0.int("minor") }
            }
            return (counts, minors)
        }
        let codes = Set(names.keys).union(counts.keys).filter { NumberingPlan.categories.contains($0) }.sorted()
        let uses = try codes.map { code -> PlanUse.CategoryUse in
            let range = try plan.minors(ofCategory: code)
            let taken = Set(minorsByCategory[code] ?? [])
            let used = counts[code] ?? 0
            let next = range.first { !taken.contains($0) }
            return PlanUse.CategoryUse(code: code, name: names[code], firstMinor: range.lowerBound, lastMinor: range.upperBound,
                                       capacity: range.count, used: used, free: max(0, range.count - taken.count), nextMinor: next)
        }
        return PlanUse(siteID: siteID, major: Int(site.major), categories: uses)
    }
}
