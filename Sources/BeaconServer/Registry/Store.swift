import BeaconKit
import Foundation
import SQLKit

/// The registry, access and event store: written once in portable SQL, run on SQLite or
/// PostgreSQL through `ProximaDatabase`.
public struct Store: Sendable {
    public let database: ProximaDatabase
    let plan = NumberingPlan()

    public init(database: ProximaDatabase) {
        self.database = database
    }

    // MARK: Organisations and categories

    public func createOrganisation(name: String, proximityUUIDs: [UUID], id: UUID = UUID()) async throws -> Organisation {
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw RegistryError(.invalid, field: "name", "an organisation needs a name")
        }
        try NameText.check(name, field: "name")
        guard !proximityUUIDs.isEmpty else {
            throw RegistryError(.invalid, field: "proximityUUIDs", "an organisation needs at least one proximity UUID")
        }
        let organisation = Organisation(id: id, name: name, proximityUUIDs: proximityUUIDs)
        try await database.transaction { db in
            try await Self.insertOrganisation(organisation, db: db)
        }
        return organisation
    }

    static func insertOrganisation(_ organisation: Organisation, db: any SQLDatabase) async throws {
        if try await db.raw("SELECT id FROM organisations WHERE name = \(bind: organisation.name)").first() != nil {
            throw RegistryError(.conflict, field: "name", "an organisation named '\(organisation.name)' already exists")
        }
        try await db.raw("INSERT INTO organisations (id, name) VALUES (\(bind: organisation.id.uuidString), \(bind: organisation.name))").run()
        for uuid in organisation.proximityUUIDs {
            if let owner = try await db.raw("SELECT organisation_id FROM organisation_uuids WHERE uuid = \(bind: uuid.uuidString)").first() {
                throw RegistryError(.conflict, field: "proximityUUIDs",
                    "proximity UUID \(uuid.uuidString) already belongs to organisation \(try owner.string("organisation_id"))")
            }
            try await db.raw("INSERT INTO organisation_uuids (uuid, organisation_id) VALUES (\(bind: uuid.uuidString), \(bind: organisation.id.uuidString))").run()
        }
    }

    public func organisations() async throws -> [Organisation] {
        try await database.read { db in
            let rows = try await db.raw("SELECT id, name FROM organisations ORDER BY name").all()
            let uuidRows = try await db.raw("SELECT uuid, organisation_id FROM organisation_uuids ORDER BY uuid").all()
            var uuids: [UUID: [UUID]] = [:]
            for row in uuidRows {
                uuids[try row.uuid("organisation_id"), default: []].append(try row.uuid("uuid"))
            }
            return try rows.map { row in
                let id = try row.uuid("id")
                return Organisation(id: id, name: try row.string("name"), proximityUUIDs: uuids[id] ?? [])
            }
        }
    }

    public func setCategory(_ category: Category) async throws {
        _ = try plan.minors(ofCategory: category.code)
        try NameText.check(category.name, field: "name")
        try await database.transaction { db in
            try await Self.upsertCategory(category, db: db)
        }
    }

    static func upsertCategory(_ category: Category, db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO categories (code, name) VALUES (\(bind: category.code), \(bind: category.name))
            ON CONFLICT (code) DO UPDATE SET name = excluded.name
            """).run()
    }

    public func categories() async throws -> [Category] {
        try await database.read { db in
            try await db.raw("SELECT code, name FROM categories ORDER BY code").all().map {
                Category(code: try $0.int("code"), name: try $0.string("name"))
            }
        }
    }

    // MARK: Sites

    public func createSite(_ new: NewSite) async throws -> Site {
        try await database.transaction { db in
            try await Self.insertSite(new, plan: NumberingPlan(), db: db)
        }
    }

    static func insertSite(_ new: NewSite, plan: NumberingPlan, db: any SQLDatabase) async throws -> Site {
        guard !new.name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw RegistryError(.invalid, field: "name", "a site needs a name")
        }
        try NameText.check(new.name, field: "name")
        try NameText.check(new.address, field: "address")
        guard new.planWidth >= 0, new.planHeight >= 0, new.planWidth.isFinite, new.planHeight.isFinite else {
            throw RegistryError(.invalid, field: "planWidth", "the floor plan size must be finite metres >= 0, found \(new.planWidth) × \(new.planHeight)")
        }
        try SiteRetention.check(new.retainEvents)
        let owned = try await db.raw("SELECT uuid FROM organisation_uuids WHERE organisation_id = \(bind: new.organisationID.uuidString) ORDER BY uuid").all()
            .map { try $0.uuid("uuid") }
        guard let firstUUID = owned.first else {
            throw RegistryError(.notFound, field: "organisationID", "no organisation \(new.organisationID.uuidString)")
        }
        let uuid = new.uuid ?? firstUUID
        guard owned.contains(uuid) else {
            throw RegistryError(.invalid, field: "uuid", "proximity UUID \(uuid.uuidString) does not belong to organisation \(new.organisationID.uuidString)")
        }
        let usedMajors = Set(try await db.raw("SELECT major FROM sites WHERE uuid = \(bind: uuid.uuidString)").all().map { try $0.uint16("major") })
        let major: UInt16
        if let requested = new.major {
            guard NumberingPlan.majors.contains(Int(requested)) else {
                throw RegistryError(.invalid, field: "major", "expected a major in 1…65535, found \(requested)")
            }
            guard requested != NumberingPlan.helpRequestMajor else {
                throw RegistryError(.invalid, field: "major", "major \(requested) is kept for help requests (phones asking for help advertise it); choose another")
            }
            guard !usedMajors.contains(requested) else {
                throw RegistryError(.conflict, field: "major", "major \(requested) of \(uuid.uuidString) already names another site")
            }
            major = requested
        } else {
            major = try plan.nextMajor(used: usedMajors, uuid: uuid.uuidString)
        }
        let row = try await db.raw("""
            INSERT INTO sites (organisation_id, uuid, major, name, address, plan_width, plan_height, retain_events)
            VALUES (\(bind: new.organisationID.uuidString), \(bind: uuid.uuidString), \(bind: Int(major)), \(bind: new.name),
                    \(bind: new.address), \(bind: new.planWidth), \(bind: new.planHeight), \(bind: new.retainEvents))
            RETURNING id
            """).first()
        guard let row else { throw RegistryError(.invalid, field: "site", "the database returned no id for the new site") }
        return Site(id: try row.int("id"), organisationID: new.organisationID, uuid: uuid, major: major, name: new.name,
                    address: new.address, planWidth: new.planWidth, planHeight: new.planHeight, retainEvents: new.retainEvents)
    }

    static func decodeSite(_ row: any SQLRow) throws -> Site {
        Site(id: try row.int("id"), organisationID: try row.uuid("organisation_id"), uuid: try row.uuid("uuid"),
             major: try row.uint16("major"), name: try row.string("name"), address: try row.string("address"),
             planWidth: try row.double("plan_width"), planHeight: try row.double("plan_height"),
             retainEvents: try row.optionalDouble("retain_events"))
    }

    static let siteColumns = "id, organisation_id, uuid, major, name, address, plan_width, plan_height, retain_events"

    public func sites() async throws -> [Site] {
        try await database.read { db in
            try await db.raw("SELECT \(unsafeRaw: Self.siteColumns) FROM sites ORDER BY uuid, major").all().map(Self.decodeSite)
        }
    }

    public func site(id: Int) async throws -> Site {
        try await database.read { db in try await Self.site(id: id, db: db) }
    }

    static func site(id: Int, db: any SQLDatabase) async throws -> Site {
        guard let row = try await db.raw("SELECT \(unsafeRaw: siteColumns) FROM sites WHERE id = \(bind: id)").first() else {
            throw RegistryError(.notFound, field: "siteID", "no site \(id)")
        }
        return try decodeSite(row)
    }

    // MARK: Zones and beacons

    static func decodeZone(_ row: any SQLRow) throws -> Zone {
        Zone(id: try row.int("id"), siteID: try row.int("site_id"), minor: try row.uint16("minor"), label: try row.string("label"),
             category: try row.int("category"), position: Position(x: try row.double("x"), y: try row.double("y")))
    }

    public func zones(siteID: Int) async throws -> [Zone] {
        try await database.read { db in
            try await db.raw("SELECT id, site_id, minor, label, category, x, y FROM zones WHERE site_id = \(bind: siteID) ORDER BY minor").all()
                .map(Self.decodeZone)
        }
    }

    static let beaconColumns = "id, site_id, uuid, major, minor, x, y, measured_power, tx_power, battery, installed_on, state"

    static func decodeBeacon(_ row: any SQLRow) throws -> Beacon {
        let stateText = try row.string("state")
        guard let state = BeaconState(rawValue: stateText) else {
            throw RegistryError(.invalid, field: "state", "stored beacon state '\(stateText)' is not planned, deployed or retired")
        }
        return Beacon(id: try row.int("id"), siteID: try row.int("site_id"), uuid: try row.uuid("uuid"), major: try row.uint16("major"),
                      minor: try row.uint16("minor"), position: Position(x: try row.double("x"), y: try row.double("y")),
                      measuredPower: try row.int("measured_power"), txPower: try row.int("tx_power"),
                      battery: try row.string("battery"), installedOn: try row.optionalString("installed_on"), state: state)
    }

    public func beacons(siteID: Int? = nil) async throws -> [Beacon] {
        try await database.read { db in
            if let siteID {
                return try await db.raw("SELECT \(unsafeRaw: Self.beaconColumns) FROM beacons WHERE site_id = \(bind: siteID) ORDER BY major, minor, id").all().map(Self.decodeBeacon)
            }
            return try await db.raw("SELECT \(unsafeRaw: Self.beaconColumns) FROM beacons ORDER BY uuid, major, minor, id").all().map(Self.decodeBeacon)
        }
    }

    /// Adds a zone and its beacon, allocating the next free minor of the category when none is given.
    public func addBeacon(_ new: NewBeacon) async throws -> Beacon {
        try await database.transaction { db in
            try await Self.insertBeacon(new, plan: NumberingPlan(), db: db)
        }
    }

    static func insertBeacon(_ new: NewBeacon, plan: NumberingPlan, db: any SQLDatabase) async throws -> Beacon {
        let site = try await site(id: new.siteID, db: db)
        guard (-128...127).contains(new.measuredPower) else {
            throw RegistryError(.invalid, field: "measuredPower", "expected dBm at 1 m in -128…127 (typically -59), found \(new.measuredPower)")
        }
        guard (-128...127).contains(new.txPower) else {
            throw RegistryError(.invalid, field: "txPower", "expected a transmit power in dBm in -128…127, found \(new.txPower)")
        }
        guard new.position.x.isFinite, new.position.y.isFinite,
              site.planWidth == 0 || (0...site.planWidth).contains(new.position.x),
              site.planHeight == 0 || (0...site.planHeight).contains(new.position.y) else {
            throw RegistryError(.invalid, field: "position",
                "(\(new.position.x), \(new.position.y)) is outside the floor plan of '\(site.name)' (\(site.planWidth) × \(site.planHeight) m)")
        }
        if let date = new.installedOn, !isISODate(date) {
            throw RegistryError(.invalid, field: "installedOn", "expected a date as yyyy-MM-dd, found '\(date)'")
        }
        try NameText.check(new.label, field: "label")
        try NameText.check(new.battery, field: "battery")
        let used = Set(try await db.raw("SELECT minor FROM zones WHERE site_id = \(bind: site.id)").all().map { try $0.uint16("minor") })
        let minor: UInt16
        if let requested = new.minor {
            // A known minor means a replacement transmitter for an existing zone; it must still
            // lie in its category's group, or the category would lie about the zone.
            let range = try plan.minors(ofCategory: new.category)
            guard range.contains(Int(requested)) else {
                throw RegistryError(.invalid, field: "minor",
                    "expected a minor of category \(new.category) in \(range.lowerBound)…\(range.upperBound), found \(requested)")
            }
            minor = requested
        } else {
            minor = try plan.nextMinor(category: new.category, used: used, siteName: site.name)
        }
        if new.state == .deployed {
            try await requireIdentityFree(uuid: site.uuid, major: site.major, minor: minor, except: nil, db: db)
        }
        if !used.contains(minor) {
            try await db.raw("""
            INSERT INTO zones (site_id, minor, label, category, x, y)
            VALUES (\(bind: site.id), \(bind: Int(minor)), \(bind: new.label), \(bind: new.category), \(bind: new.position.x), \(bind: new.position.y))
            """).run()
        }
        guard let row = try await db.raw("""
            INSERT INTO beacons (site_id, uuid, major, minor, x, y, measured_power, tx_power, battery, installed_on, state)
            VALUES (\(bind: site.id), \(bind: site.uuid.uuidString), \(bind: Int(site.major)), \(bind: Int(minor)),
                    \(bind: new.position.x), \(bind: new.position.y), \(bind: new.measuredPower), \(bind: new.txPower),
                    \(bind: new.battery), \(bind: new.installedOn), \(bind: new.state.rawValue))
            RETURNING id
            """).first() else {
            throw RegistryError(.invalid, field: "beacon", "the database returned no id for the new beacon")
        }
        return Beacon(id: try row.int("id"), siteID: site.id, uuid: site.uuid, major: site.major, minor: minor,
                      position: new.position, measuredPower: new.measuredPower, txPower: new.txPower,
                      battery: new.battery, installedOn: new.installedOn, state: new.state)
    }

    static func isISODate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let month = Int(parts[1]), let day = Int(parts[2]), Int(parts[0]) != nil else { return false }
        return (1...12).contains(month) && (1...31).contains(day)
    }

    static func requireIdentityFree(uuid: UUID, major: UInt16, minor: UInt16, except beaconID: Int?, db: any SQLDatabase) async throws {
        let rows = try await db.raw("""
            SELECT id FROM beacons WHERE uuid = \(bind: uuid.uuidString) AND major = \(bind: Int(major))
            AND minor = \(bind: Int(minor)) AND state = 'deployed'
            """).all()
        let others = try rows.map { try $0.int("id") }.filter { $0 != beaconID }
        if let other = others.first {
            throw RegistryError(.conflict, field: "state",
                "beacon \(other) is already deployed as \(uuid.uuidString) \(major).\(minor); two deployed beacons must not share an identity")
        }
    }

    /// Moves a beacon through planned → deployed → retired, refusing a second deployed twin.
    public func setBeaconState(id: Int, state: BeaconState, installedOn: String? = nil) async throws -> Beacon {
        try await database.transaction { db in
            guard let row = try await db.raw("SELECT \(unsafeRaw: Self.beaconColumns) FROM beacons WHERE id = \(bind: id)").first() else {
                throw RegistryError(.notFound, field: "id", "no beacon \(id)")
            }
            var beacon = try Self.decodeBeacon(row)
            if let installedOn, !Self.isISODate(installedOn) {
                throw RegistryError(.invalid, field: "installedOn", "expected a date as yyyy-MM-dd, found '\(installedOn)'")
            }
            if state == .deployed {
                try await Self.requireIdentityFree(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor, except: id, db: db)
            }
            beacon.state = state
            beacon.installedOn = installedOn ?? beacon.installedOn
            try await db.raw("UPDATE beacons SET state = \(bind: state.rawValue), installed_on = \(bind: beacon.installedOn) WHERE id = \(bind: id)").run()
            return beacon
        }
    }

    /// Every identity shared by more than one deployed beacon (empty when the registry is sound).
    public func identityConflicts() async throws -> [IdentityConflict] {
        try await database.read { db in
            let rows = try await db.raw("SELECT id, uuid, major, minor FROM beacons WHERE state = 'deployed' ORDER BY uuid, major, minor, id").all()
            var groups: [BeaconIdentity: [Int]] = [:]
            for row in rows {
                let identity = BeaconIdentity(uuid: try row.uuid("uuid"), major: try row.uint16("major"), minor: try row.uint16("minor"))
                groups[identity, default: []].append(try row.int("id"))
            }
            return groups.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }.map {
                IdentityConflict(uuid: $0.key.uuid, major: $0.key.major, minor: $0.key.minor, beaconIDs: $0.value)
            }
        }
    }

    // MARK: Resolution

    /// The meaning of an identity: "Site – Category: Zone label", or nil when no site owns it.
    public func resolve(_ identity: BeaconIdentity) async throws -> ResolvedIdentity? {
        try await database.read { db in try await Self.resolve(identity, db: db) }
    }

    static func resolve(_ identity: BeaconIdentity, db: any SQLDatabase) async throws -> ResolvedIdentity? {
        guard let siteRow = try await db.raw("SELECT id, name FROM sites WHERE uuid = \(bind: identity.uuid.uuidString) AND major = \(bind: Int(identity.major))").first() else {
            return nil
        }
        let siteID = try siteRow.int("id")
        let siteName = try siteRow.string("name")
        let zoneRow = try await db.raw("""
            SELECT z.label, c.name AS category_name FROM zones z LEFT JOIN categories c ON c.code = z.category
            WHERE z.site_id = \(bind: siteID) AND z.minor = \(bind: Int(identity.minor))
            """).first()
        let zoneLabel = try zoneRow?.string("label")
        let category = try zoneRow?.optionalString("category_name")
        let label = switch (category, zoneLabel) {
        case let (category?, zone?): "\(siteName) – \(category): \(zone)"
        case let (nil, zone?): "\(siteName) – \(zone)"
        default: "\(siteName) – minor \(identity.minor)"
        }
        return ResolvedIdentity(uuid: identity.uuid, major: identity.major, minor: identity.minor, siteID: siteID,
                                siteName: siteName, category: category, zoneLabel: zoneLabel, label: label)
    }
}
