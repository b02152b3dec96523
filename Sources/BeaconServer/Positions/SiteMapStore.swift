import BeaconKit
import BeaconLocate
import Foundation
import SQLKit

enum PositionMigrations {
    /// Site maps, and room events in the one event table (so they share its ids, cursor and
    /// feeds). A phone's room events have no identity: uuid '' and major and minor 0.
    static let siteMaps = Migrations.Migration(version: 4, name: "site maps and room events") { _ in
        [
            """
            CREATE TABLE site_maps (site_id BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
              document TEXT NOT NULL, version BIGINT NOT NULL, updated_at DOUBLE PRECISION NOT NULL)
            """,
            "ALTER TABLE region_events ADD COLUMN room TEXT",
            "ALTER TABLE region_events ADD COLUMN subject_kind TEXT",
            "ALTER TABLE region_events ADD COLUMN subject TEXT",
        ]
    }
}

/// A site's map as stored: the document as uploaded, and a version counted up per upload.
public struct StoredSiteMap: Sendable {
    public var siteID: Int
    public var document: String
    public var version: Int
    public var map: SiteMap
}

extension Store {
    /// Checks a map document (the schema of `proxima locate --map`) and stores it as the site's
    /// map, replacing any earlier one. Refusals name the JSON path (`rooms[0].polygon[3].y`).
    public func setSiteMap(siteID: Int, document: Data, now: Double = Date().timeIntervalSince1970) async throws -> StoredSiteMap {
        let map: SiteMap
        do { map = try SiteMap.decode(document) } catch {
            throw RegistryError(.invalid, field: error.path.isEmpty ? "body" : error.path, "expected \(error.expected), found \(error.found)")
        }
        let text = String(decoding: document, as: UTF8.self)
        return try await database.transaction { db in
            _ = try await Self.site(id: siteID, db: db)
            let previous = try await db.raw("SELECT version FROM site_maps WHERE site_id = \(bind: siteID)").first()
            let version = (try previous?.int("version") ?? 0) + 1
            try await db.raw("""
                INSERT INTO site_maps (site_id, document, version, updated_at) VALUES (\(bind: siteID), \(bind: text), \(bind: version), \(bind: now))
                ON CONFLICT (site_id) DO UPDATE SET document = excluded.document, version = excluded.version, updated_at = excluded.updated_at
                """).run()
            return StoredSiteMap(siteID: siteID, document: text, version: version, map: map)
        }
    }

    /// The site's map, nil when none was uploaded (404 when the site does not exist).
    public func siteMap(siteID: Int) async throws -> StoredSiteMap? {
        try await database.read { db in
            _ = try await Self.site(id: siteID, db: db)
            return try await Self.siteMap(siteID: siteID, db: db)
        }
    }

    /// The version of the site's map, nil when it has none (404 when the site does not exist).
    public func siteMapVersion(siteID: Int) async throws -> Int? {
        try await database.read { db in
            _ = try await Self.site(id: siteID, db: db)
            return try await Self.siteMapVersion(siteID: siteID, db: db)
        }
    }

    static func siteMap(siteID: Int, db: any SQLDatabase) async throws -> StoredSiteMap? {
        guard let row = try await db.raw("SELECT document, version FROM site_maps WHERE site_id = \(bind: siteID)").first() else { return nil }
        let document = try row.string("document")
        let map: SiteMap
        do { map = try SiteMap.decode(Data(document.utf8)) } catch {
            throw RegistryError(.invalid, field: error.path, "the stored map of site \(siteID) no longer loads: \(error)")
        }
        return StoredSiteMap(siteID: siteID, document: document, version: try row.int("version"), map: map)
    }

    static func siteMapVersion(siteID: Int, db: any SQLDatabase) async throws -> Int? {
        try await db.raw("SELECT version FROM site_maps WHERE site_id = \(bind: siteID)").first().map { try $0.int("version") }
    }

    /// Stores room changes as events of the site; labels come from the registry for beacons.
    static func storeRoomChanges(_ changes: [SubjectRoomChange], siteID: Int, gatewayID: String, now: Double,
                                 db: any SQLDatabase) async throws -> [StoredEvent] {
        var events: [StoredEvent] = []
        var labels: [TrackedSubject: String] = [:]
        for change in changes {
            if labels[change.subject] == nil {
                switch change.subject {
                case .beacon(let identity): labels[change.subject] = try await resolve(identity, db: db)?.label ?? identity.description
                case .phone(let name): labels[change.subject] = name
                }
            }
            let label = labels[change.subject] ?? change.subject.name
            var identity: BeaconIdentity?
            if case .beacon(let beacon) = change.subject { identity = beacon }
            let kind: RoomOccurrence.Kind = change.kind == .enter ? .roomEnter : .roomExit
            let row = EventRow(gatewayID: gatewayID, kind: kind.rawValue, identity: identity, siteID: siteID, label: label, time: change.time,
                               recordedAt: now, room: change.room, subjectKind: change.subject.kind, subject: change.subject.name)
            guard let id = try await row.insert(db: db) else { continue }
            events.append(StoredEvent(id: id, gatewayID: gatewayID, siteID: siteID, label: label,
                                      occurrence: .room(RoomOccurrence(kind: kind, time: change.time, room: change.room,
                                                                       subject: RoomOccurrence.Subject(change.subject)))))
        }
        return events
    }

    static func decodeRoomEvent(_ row: any SQLRow, kind: RoomOccurrence.Kind) throws -> StoredEvent {
        let subjectKind = try row.optionalString("subject_kind") ?? "beacon"
        let name = try row.optionalString("subject") ?? ""
        let subject: TrackedSubject = if subjectKind == "beacon", let identity = SiteTracker.identity(name) { .beacon(identity) } else { .phone(name) }
        return StoredEvent(id: try row.int("id"), gatewayID: try row.string("gateway_id"), siteID: try row.optionalInt("site_id"),
                           label: try row.string("label"),
                           occurrence: .room(RoomOccurrence(kind: kind, time: try row.double("time"), room: try row.optionalString("room") ?? "",
                                                            subject: RoomOccurrence.Subject(subject))))
    }
}
