import BeaconKit
import Foundation
import SQLKit

extension Store {
    /// The directory of one organisation, sorted by major and minor.
    public func directory(organisationID: UUID) async throws -> Directory {
        guard let organisation = try await organisations().first(where: { $0.id == organisationID }) else {
            throw RegistryError(.notFound, field: "organisation", "no organisation \(organisationID.uuidString)")
        }
        let categories = try await self.categories()
        let sites = try await self.sites().filter { $0.organisationID == organisationID }
        var locations: [Directory.Location] = []
        var usedCategories = Set<Int>()
        for site in sites {
            let zones = try await self.zones(siteID: site.id)
            usedCategories.formUnion(zones.map(\.category))
            locations.append(Directory.Location(
                uuid: site.uuid, major: site.major, name: site.name, address: site.address,
                planWidth: site.planWidth, planHeight: site.planHeight,
                minors: zones.map { .init(minor: $0.minor, category: $0.category, label: $0.label, x: $0.position.x, y: $0.position.y) }))
        }
        var names: [String: String] = [:]
        for category in categories where usedCategories.contains(category.code) {
            names[String(category.code)] = category.name
        }
        return Directory(organisation: organisation, categories: names, locations: locations)
    }

    /// Imports a directory in one transaction: creates the organisation when new, and adds or
    /// updates its categories, sites (by uuid and major) and zones (by minor). Only the named
    /// organisation changes: a location under another organisation's proximity UUID is refused.
    public func importDirectory(_ directory: Directory) async throws {
        try directory.checkNamesAndMinors()
        try await database.transaction { db in
            let existing = try await db.raw("SELECT id FROM organisations WHERE id = \(bind: directory.organisation.id.uuidString)").first()
            if existing == nil {
                try await Self.insertOrganisation(directory.organisation, db: db)
            }
            let owned = Set(try await db.raw("""
                SELECT uuid FROM organisation_uuids WHERE organisation_id = \(bind: directory.organisation.id.uuidString)
                """).all().map { try $0.uuid("uuid") })
            for (index, location) in directory.locations.enumerated() where !owned.contains(location.uuid) {
                throw RegistryError(.invalid, field: "locations[\(index)].uuid",
                    "expected a proximity UUID of organisation \(directory.organisation.id.uuidString), found \(location.uuid.uuidString), which it does not own; an import changes only the organisation it names")
            }
            for (key, name) in directory.categories {
                guard let code = Int(key), NumberingPlan.categories.contains(code) else {
                    throw RegistryError(.invalid, field: "categories.\(key)", "expected a category code in 0…65")
                }
                try await Self.upsertCategory(Category(code: code, name: name), db: db)
            }
            for (index, location) in directory.locations.enumerated() {
                let siteID: Int
                if let row = try await db.raw("SELECT id FROM sites WHERE uuid = \(bind: location.uuid.uuidString) AND major = \(bind: Int(location.major))").first() {
                    siteID = try row.int("id")
                    try await db.raw("""
                        UPDATE sites SET name = \(bind: location.name), address = \(bind: location.address),
                        plan_width = \(bind: location.planWidth), plan_height = \(bind: location.planHeight) WHERE id = \(bind: siteID)
                        """).run()
                } else {
                    do {
                        siteID = try await Self.insertSite(NewSite(
                            organisationID: directory.organisation.id, uuid: location.uuid, major: location.major, name: location.name,
                            address: location.address, planWidth: location.planWidth, planHeight: location.planHeight), plan: NumberingPlan(), db: db).id
                    } catch let error as RegistryError {
                        throw RegistryError(error.kind, field: "locations[\(index)].\(error.field)", error.message)
                    }
                }
                for entry in location.minors {
                    try await db.raw("""
                        INSERT INTO zones (site_id, minor, label, category, x, y)
                        VALUES (\(bind: siteID), \(bind: Int(entry.minor)), \(bind: entry.label), \(bind: entry.category), \(bind: entry.x), \(bind: entry.y))
                        ON CONFLICT (site_id, minor) DO UPDATE SET label = excluded.label, category = excluded.category, x = excluded.x, y = excluded.y
                        """).run()
                }
            }
        }
    }
}
