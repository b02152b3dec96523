/// The rules that turn sites and categories into majors and minors: one major per site (per
/// proximity UUID), and minor = category × 1000 + n with n in 1…999.
///
/// The book's warning about a restaurant chain: 65,535 majors look plenty until every branch,
/// floor and kiosk takes one. The plan refuses clearly when a group or the majors run out.
public struct NumberingPlan: Sendable, Hashable {
    public static let groupSize = 1000
    /// Majors are 1…65535; 0 is kept as "not allocated" for readers that treat it so.
    public static let majors: ClosedRange<Int> = 1...65535
    /// 65 is the last category with any room: 65001…65535.
    public static let categories: ClosedRange<Int> = 0...65
    /// The major a visitor's phone advertises when it asks for help (the Nerdery write-up's
    /// 999, with a random minor): never a site's, so no fixed beacon answers to it.
    public static let helpRequestMajor: UInt16 = 999

    public init() {}

    /// The minors of a category, in allocation order.
    public func minors(ofCategory category: Int) throws(RegistryError) -> ClosedRange<Int> {
        guard Self.categories.contains(category) else {
            throw RegistryError(.invalid, field: "category",
                "expected a category in 0…65 (minor = category × 1000 + n must fit in 16 bits), found \(category)")
        }
        let first = category * Self.groupSize + 1
        return first...min(first + Self.groupSize - 2, 65535)
    }

    /// The category a minor belongs to.
    public func category(ofMinor minor: UInt16) -> Int { Int(minor) / Self.groupSize }

    /// The lowest free minor of the category, or a clear refusal when the group is full.
    public func nextMinor(category: Int, used: Set<UInt16>, siteName: String) throws(RegistryError) -> UInt16 {
        let range = try minors(ofCategory: category)
        for minor in range where !used.contains(UInt16(minor)) {
            return UInt16(minor)
        }
        throw RegistryError(.exhausted, field: "category",
            "category \(category) of site '\(siteName)' is full: all \(range.count) minors \(range.lowerBound)…\(range.upperBound) are taken; retire beacons or use another category")
    }

    /// The lowest free major under a proximity UUID, or a clear refusal when all are taken.
    public func nextMajor(used: Set<UInt16>, uuid: String) throws(RegistryError) -> UInt16 {
        for major in Self.majors where !used.contains(UInt16(major)) && UInt16(major) != Self.helpRequestMajor {
            return UInt16(major)
        }
        throw RegistryError(.exhausted, field: "major",
            "all 65,535 majors of proximity UUID \(uuid) are taken (999 is kept for help requests): register another proximity UUID for the organisation, or give sites of one building a shared major and split them by category")
    }
}
